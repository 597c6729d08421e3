import { TenantQueueError } from '../core/errors';

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

/**
 * A job names a lane its queue does not declare; nothing was enqueued.
 * @publicApi
 */
export class InvalidLaneError extends TenantQueueError {}

/**
 * A job's `fairKey` is not 1-128 printable ASCII characters, names no tenant, or its queue does
 * not use fair keys; nothing was enqueued.
 * @publicApi
 */
export class InvalidFairKeyError extends TenantQueueError {}
