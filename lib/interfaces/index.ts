export * from '../core/types/actor.interface';
export * from '../core/types/tenant-envelope.interface';
export * from '../core/types/tenant-job.interface';
export * from './tenant-queue-options.interface';
export * from './register-queue-options.interface';
export * from '../core/types/tenant-directory.interface';
export type { TenantSchedulerOptions } from '../scheduler';
export type { TenantQueuePortOptions, TenantQueuePortProvider } from '../guards';
