export * from './tenant-worker-host';
export * from './tenant-processor.decorator';
export * from './on-tenant-worker-event.decorator';
