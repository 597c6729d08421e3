export * from './pool-options';
export * from './pool-router';
export * from './pool-ids.script';
export * from './unknown-pool.error';
export * from './pool-routing-unavailable.error';
export type {
  TenantRoute,
  TenantPoolRouting,
  PoolQueueOptions,
  PooledQueueOptions,
} from './pool-queue-options.interface';
