export * from './tenant-queue';
export * from './inject-tenant-queue.decorator';
export * from './job-dispatcher.interface';
