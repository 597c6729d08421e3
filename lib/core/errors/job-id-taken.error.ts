import { TenantQueueError } from './tenant-queue.error';

/**
 * A caller-chosen job id is already used on the queue by another tenant (or by a job without a
 * tenant). Nothing of the call was written; the other job is untouched and was not revealed.
 * @publicApi
 */
export class JobIdTakenError extends TenantQueueError {
  constructor(
    readonly queue: string,
    readonly jobId: string,
    message: string,
  ) {
    super(message);
  }
}
