export * from './tenant-worker-host';
export * from './tenant-processor.decorator';
export * from './on-tenant-worker-event.decorator';
export { withRunOptions, RUN_OPTIONS_KEY } from '../envelope/job-run-options';
export type { JobRunOptions } from '../envelope/job-run-options';
export * from './run-identity';
export * from './worker-thread.sandbox';
