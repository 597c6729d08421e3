import { SetMetadata } from '@nestjs/common';

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
 * `process` method. Skipped duplicates complete with the first run's return value.
 * @publicApi
 */
export const Idempotent = (options: IdempotentOptions = {}): ClassDecorator & MethodDecorator =>
  SetMetadata(IDEMPOTENT_METADATA, options);
