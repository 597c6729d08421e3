export * from './is-tenant-job-context';
export * from './tenant-required.guard';
