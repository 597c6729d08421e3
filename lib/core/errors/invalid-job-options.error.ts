import { TenantQueueError } from './tenant-queue.error';

/**
 * A job option BullMQ would refuse (at once, or later at admission or completion) or that the
 * queue cannot honour, a job name that is not a string, or an `addBulk` argument that is not an
 * array of jobs; `option` names it (`name`, `jobs`, `jobs[<i>]` for those). Nothing of the call
 * was written.
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
