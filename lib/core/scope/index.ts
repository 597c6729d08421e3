export * from './tenant-context-id.strategy';
export * from './tenant-job-request';
export { JobScope } from './job-scope';
