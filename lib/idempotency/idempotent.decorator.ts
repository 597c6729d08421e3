import { SetMetadata } from '@nestjs/common';
import { MAX_TIMEOUT } from '../core/envelope/job-run-options';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { Messages } from '../tenant-queue.messages';

export const IDEMPOTENT_METADATA = 'tenant-queue:idempotent';

/**
 * Options of `@Idempotent(...)`.
 * @publicApi
 */
export interface IdempotentOptions {
  /**
   * How long (ms) a completed run is remembered: a job with the same tenant and `runId` that
   * arrives within this window is skipped and returns the first run's result.
   * @default 86_400_000 (24 h)
   */
  ttl?: number;
  /**
   * Lease (ms) of a run in progress, renewed while it runs. A duplicate that starts meanwhile is
   * delayed until the run ends or the lease lapses (a crashed run's claim expires on its own).
   * @default the worker's `lockDuration` (30 000 ms in BullMQ)
   */
  lease?: number;
}

/**
 * Runs each `(tenant, runId)` at most once to completion: on a `@TenantProcessor` class or its
 * `process` method. Skipped duplicates complete with the first run's return value. `ttl` and
 * `lease` are whole milliseconds from 1 (`lease` at most 2^31 - 1); another value throws
 * `InvalidTenantQueueOptionsError` where the decorator is applied.
 * @publicApi
 */
export const Idempotent = (options: IdempotentOptions = {}): ClassDecorator & MethodDecorator => {
  check('ttl', options.ttl, Number.MAX_SAFE_INTEGER);
  check('lease', options.lease, MAX_TIMEOUT);
  return SetMetadata(IDEMPOTENT_METADATA, options);
};

/** Redis refuses any other expiry, and only after the handler ran: refuse it up front. */
function check(field: 'ttl' | 'lease', value: unknown, max: number): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > max) {
    throw new InvalidTenantQueueOptionsError(Messages.invalidIdempotentOption(field, value, max));
  }
}
