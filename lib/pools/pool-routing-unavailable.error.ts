import { TenantQueueError } from '../core/errors';

/**
 * The tenant directory failed while a job was being routed to its pool, and this process has
 * never routed that tenant before; nothing of the call was written. Transient: retry the call.
 * @publicApi
 */
export class PoolRoutingUnavailableError extends TenantQueueError {
  constructor(
    readonly queue: string,
    readonly tenantId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
