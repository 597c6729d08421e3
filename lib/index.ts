export { TenantQueueModule } from './tenant-queue.module';
export {
  TENANT_QUEUE_OPTIONS_TYPE,
  TENANT_QUEUE_ASYNC_OPTIONS_TYPE,
} from './tenant-queue.module-definition';
export { TenantQueueRegistry } from './core/queues/tenant-queue.registry';
export { TenantQueueRedis } from './core/redis/tenant-queue.redis';
export {
  ENVELOPE_KEY,
  TENANT_JOB_CONTEXT_TYPE,
  DEFAULT_TENANT_ID_PATTERN,
  getTenantQueueToken,
} from './tenant-queue.constants';
export * from './interfaces';
export * from './core/errors';
export * from './core/context';

export * from './core/processor';
export * from './idempotency';
export * from './core/scope';
export * from './dead-letters';
export * from './guards';
export { TenantQueue, InjectTenantQueue } from './core/queues';
export type { TenantBulkJob, TenantJobOptions } from './core/queues';
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
export * from './core/tenants';
export * from './core/cls';
