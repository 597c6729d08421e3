import { TenantQueueError } from './tenant-queue.error';

/**
 * An attempt ran past its `timeoutMs`. It fails like any other error (retried per the job's
 * attempts and backoff); its `failedReason` starts with `[TIMEOUT]`.
 * @publicApi
 */
export class JobTimeoutError extends TenantQueueError {
  readonly reason = 'TIMEOUT';

  constructor(
    readonly timeoutMs: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Prefix of the `failedReason` of an attempt that timed out.
 * @publicApi
 */
export const TIMEOUT_REASON_PREFIX = '[TIMEOUT] ';
