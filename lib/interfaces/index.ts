export * from '../core/context/actor.interface';
export * from '../core/envelope/tenant-envelope.interface';
export * from '../core/processor/tenant-job.interface';
export * from './tenant-queue-options.interface';
export * from './register-queue-options.interface';
export * from '../core/tenants/tenant-directory.interface';
export * from './tenant-scheduler-options.interface';
export * from './tenant-queue-ports.interface';
