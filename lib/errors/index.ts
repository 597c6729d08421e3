export * from './tenant-queue.error';
export * from './missing-tenant.error';
export * from './invalid-tenant-id.error';
export * from './invalid-payload.error';
export * from './invalid-envelope.error';
export * from './invalid-options.error';
export * from './unknown-queue.error';
export * from './job-cancelled.error';
