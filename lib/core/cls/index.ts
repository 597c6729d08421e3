export type { TenantJobClsOptions } from './job-cls-options.interface';
export { TenantJobClsInitContext } from './tenant-job-cls-init-context';
