export { TenantQueueModule } from './tenant-queue.module';
export {
  TENANT_QUEUE_OPTIONS_TYPE,
  TENANT_QUEUE_ASYNC_OPTIONS_TYPE,
} from './tenant-queue.module-definition';
export { TenantQueueRegistry } from './tenant-queue.registry';
export { TenantQueueRedis } from './tenant-queue.redis';
export {
  ENVELOPE_KEY,
  TENANT_JOB_CONTEXT_TYPE,
  DEFAULT_TENANT_ID_PATTERN,
  getTenantQueueToken,
} from './tenant-queue.constants';
export * from './interfaces';
export * from './errors';
export * from './context';

export * from './processor';
export * from './scope';
export * from './dead-letters';
export * from './guards';
export { TenantQueue, InjectTenantQueue } from './producer';
export type { TenantBulkJob, TenantJobOptions } from './producer';
export {
  InMemoryTenantDirectory,
  InMemoryEntitlementChecker,
  InMemoryActorPermissionChecker,
  TenantQueueTestingModule,
  TenantQueueTesting,
} from './testing';
export type { TestJob, TestJobState } from './testing';
export * from './scheduler';
export * from './fairness';
export * from './metrics';
export * from './dashboard';
export * from './tiers';
export * from './cls';
