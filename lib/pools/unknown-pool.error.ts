import { TenantQueueError } from '../core/errors';

/**
 * Routing sent a tenant's job to a pool its queue does not declare; nothing of the call was
 * written. Declare the pool in `registerQueue({ pools })` or fix the routing, tier or record.
 * @publicApi
 */
export class UnknownPoolError extends TenantQueueError {
  constructor(
    readonly queue: string,
    readonly tenantId: string,
    readonly pool: unknown,
    message: string,
  ) {
    super(message);
  }
}
