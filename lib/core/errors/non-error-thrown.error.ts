import { TenantQueueError } from './tenant-queue.error';

/**
 * A job's code (its handler, a job guard or cls.setup) threw something that is not an `Error` (a
 * string, `undefined`, a plain object), or an `Error` BullMQ cannot read (a `message`, `name` or
 * `stack` getter that throws, a message that is not a string). The module wraps it so BullMQ records a readable `failedReason`; `value` is what was thrown.
 * @publicApi
 */
export class NonErrorThrownError extends TenantQueueError {
  constructor(
    readonly value: unknown,
    message: string,
  ) {
    super(message);
  }
}
