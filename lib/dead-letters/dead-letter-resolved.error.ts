import { TenantQueueError } from '../core/errors';

/**
 * The dead letter's job ran again outside `DeadLetters.replay` (BullMQ's `job.retry()`,
 * bull-board's Retry, any worker) and completed, or is still on its way; a replay would run the
 * work once more, so it is refused. `state` says which.
 * @publicApi
 */
export class DeadLetterResolvedError extends TenantQueueError {
  constructor(
    readonly state: 'completed' | 'retrying',
    message: string,
  ) {
    super(message);
  }
}
