import { TenantQueueError } from './tenant-queue.error';

/**
 * Redis did not take an enqueue within `enqueueTimeoutMs`, or refused it for want of memory (at
 * `maxmemory` under `noeviction`: the message says so). `written` is `false` when nothing was
 * sent (the job is not in Redis and never will be from this call), `'unknown'` when a command was
 * sent and its answer lost with the connection (Redis may have run it before it went away). A
 * caller-chosen `jobId`'s claim counts as such a command; it is released once Redis answers.
 * @publicApi
 */
export class EnqueueUnavailableError extends TenantQueueError {
  constructor(
    readonly queue: string,
    readonly written: false | 'unknown',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
