export * from './in-memory-tenant-directory';
export { TenantQueueTestingModule } from './tenant-queue-testing.module';
export { TenantQueueTesting } from './tenant-queue-testing';
export type { TestJob, TestJobState } from './tenant-queue-testing';
export * from './in-memory-entitlement-checker';
export * from './in-memory-actor-permission-checker';
