import { TenantQueueError } from './tenant-queue.error';

/** A queue name was used that no `registerQueue` declared. */
export class UnknownTenantQueueError extends TenantQueueError {}
