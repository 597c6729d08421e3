import { TenantQueueError } from './tenant-queue.error';

/**
 * A module or queue option is wrong; thrown once at bootstrap, naming the field.
 * @publicApi
 */
export class InvalidTenantQueueOptionsError extends TenantQueueError {}
