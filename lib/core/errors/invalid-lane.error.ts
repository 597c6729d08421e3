import { TenantQueueError } from './tenant-queue.error';

/**
 * A job names a lane its queue does not declare; nothing was enqueued.
 * @publicApi
 */
export class InvalidLaneError extends TenantQueueError {}
