import { TenantQueueError } from './tenant-queue.error';

/**
 * The `TenantDirectory` says the tenant is missing, suspended or deleted; nothing was enqueued.
 * @publicApi
 */
export class TenantNotActiveError extends TenantQueueError {}
