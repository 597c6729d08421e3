export * from './tenant-context';
export * from './tenant-resolution.middleware';
export { tenantLogFields } from './tenant-log-fields';
export type { TenantLogRef } from './tenant-log-fields';
