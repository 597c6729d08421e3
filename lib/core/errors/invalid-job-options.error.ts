import { TenantQueueError } from './tenant-queue.error';

/**
 * A job option BullMQ would refuse (at once, or later at admission or completion) or that the
 * queue cannot honour; `option` names it. Nothing of the call was written.
 * @publicApi
 */
export class InvalidJobOptionsError extends TenantQueueError {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(message);
  }
}
