import { TenantQueueError } from './tenant-queue.error';

/**
 * The job payload is not a plain object, or already carries `_tenant`. Nothing was written.
 * @publicApi
 */
export class InvalidPayloadError extends TenantQueueError {}
