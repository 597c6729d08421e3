import { TenantQueueError } from './tenant-queue.error';

/**
 * A tenant's backlog in a fair queue is at its `maxBacklog`; nothing of the call was written.
 * @publicApi
 */
export class TenantBacklogFullError extends TenantQueueError {
  constructor(
    readonly queue: string,
    readonly tenantId: string,
    readonly backlog: number,
    message: string,
  ) {
    super(message);
  }
}
