import type { BackoffOptions } from 'bullmq';
import { TenantEnvelope } from '../core/types/tenant-envelope.interface';

/**
 * Why a job ended in the dead letters: its last attempt timed out, it threw a `NonRetryableError`
 * (or BullMQ's `UnrecoverableError`), it crashed its worker too often, or it ran out of attempts.
 * @publicApi
 */
export type DeadLetterReason = 'TIMEOUT' | 'NON_RETRYABLE' | 'STALLED' | 'ATTEMPTS_EXHAUSTED';

/**
 * A job that failed for good, kept per tenant until replayed or purged.
 * @publicApi
 */
export interface DeadLetter {
  jobId: string;
  queue: string;
  name: string;
  tenantId: string;
  /** Run id; a replay runs under the same one, so `@Idempotent` and your upserts see one run. */
  runId: string;
  reason: DeadLetterReason;
  /**
   * BullMQ's `failedReason` of the last attempt: its first 16,384 characters, then
   * `… [<n> more characters]` (BullMQ's failed job keeps the whole text).
   */
  failedReason: string;
  /** The last attempt's stack, bounded as `failedReason` is. */
  stack?: string;
  /** Attempts made before the job was given up. */
  attempts: number;
  /** ISO-8601 instant of the final failure. */
  failedAt: string;
  /** ISO-8601 instant its last attempt started, when BullMQ recorded one. */
  startedAt?: string;
  envelope: TenantEnvelope;
  /** The job's payload (without `_tenant` and `_run`). */
  data: Record<string, unknown>;
  /**
   * The job options a replay reuses: with them, the envelope's `fairKey` and the job's name, a
   * replay on a fair queue goes back to the same lane and fair key.
   */
  opts: {
    attempts?: number;
    backoff?: number | BackoffOptions;
    priority?: number;
    /** The `lane` the job asked for on a fair queue with lanes. */
    lane?: string;
  };
  timeoutMs?: number;
  /**
   * The W3C `traceparent` of the context the job was enqueued in (its `process` span's parent,
   * with `telemetry` set; else its envelope's), when known: a replay's span links to it.
   */
  traceparent?: string;
  /** How many times this run was replayed before this failure. */
  replays: number;
  /**
   * ISO-8601 instant the module saw the job complete after a retry outside `DeadLetters.replay`
   * (BullMQ's `job.retry()`, bull-board's Retry); such a letter is kept for the record and its
   * replay is refused with `DeadLetterResolvedError`. Absent while the letter is open.
   */
  resolvedAt?: string;
}

/**
 * Which page of a tenant's dead letters `DeadLetters.list(tenantId, query)` returns.
 * @publicApi
 */
export interface DeadLetterQuery {
  /** Only this queue (default: every registered queue). */
  queue?: string;
  /** @default 0 */
  offset?: number;
  /** @default 20 (at most 100) */
  limit?: number;
}

/**
 * A page of one tenant's dead letters, newest first.
 * @publicApi
 */
export interface DeadLetterPage {
  items: DeadLetter[];
  total: number;
  offset: number;
  limit: number;
}

/**
 * Called once per new dead letter, in the dead letter's tenant context.
 * @publicApi
 */
export type DeadLetterListener = (letter: DeadLetter) => void | Promise<void>;
