import { TenantQueueError } from './tenant-queue.error';

/**
 * A job's `fairKey` is not 1-128 printable ASCII characters, names no tenant, or its queue does
 * not use fair keys; nothing was enqueued.
 * @publicApi
 */
export class InvalidFairKeyError extends TenantQueueError {}
