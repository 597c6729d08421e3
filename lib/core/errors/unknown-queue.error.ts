import { TenantQueueError } from './tenant-queue.error';

/**
 * A queue name was used that no `registerQueue` declared.
 * @publicApi
 */
export class UnknownTenantQueueError extends TenantQueueError {}
