import { TenantQueueError } from './tenant-queue.error';

/**
 * A tenant id failed the configured pattern; it never reaches a Redis key.
 * @publicApi
 */
export class InvalidTenantIdError extends TenantQueueError {}
