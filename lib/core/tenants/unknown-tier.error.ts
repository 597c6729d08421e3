import { TenantQueueError } from '../errors';

/**
 * A tier assignment named a tier the `tiers` option does not define; nothing was written.
 * @publicApi
 */
export class UnknownTierError extends TenantQueueError {
  constructor(
    readonly tier: unknown,
    message: string,
  ) {
    super(message);
  }
}
