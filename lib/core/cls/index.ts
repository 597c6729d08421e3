export type { TenantJobClsOptions } from '../types/job-cls-options.interface';
export { TenantJobClsInitContext } from './tenant-job-cls-init-context';
