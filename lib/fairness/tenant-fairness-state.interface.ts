import type { TenantRateLimit } from '../core/types/tenant-tier-options.interface';

/**
 * One tenant's fairness state on one queue, as `TenantFairness.getTenant` reads it from Redis.
 * @publicApi
 */
export interface TenantFairnessState {
  queue: string;
  tenantId: string;
  /** Jobs waiting in the gate, not yet admitted into BullMQ. */
  backlog: number;
  /**
   * Jobs waiting their turn in BullMQ's prioritized set (`priorityByTurn`, the default: a job
   * whose tenant no rule holds skips the gate); not counted in `backlog`.
   */
  queuedByTurn: number;
  /** Jobs admitted into BullMQ and not finished (waiting there or running), across all workers. */
  inFlight: number;
  /** Weight in use: runtime override, else directory, else the queue default. */
  weight: number;
  /** Weight set at run time with `setWeight`, if any. */
  weightOverride: number | null;
  /** Cap in use (0 = none): runtime override, else directory, else the queue default. */
  concurrency: number;
  /** Cap set at run time with `setConcurrency`, if any. */
  concurrencyOverride: number | null;
  /**
   * Guaranteed floor in use (0 = none; at most the cap): run-time override, else tier/directory,
   * else the queue's `fairness.defaultMinConcurrency`.
   */
  minConcurrency: number;
  /** Floor set at run time with `setMinConcurrency`, if any. */
  minConcurrencyOverride: number | null;
  paused: boolean;
  /** While paused: when (Redis clock, ms) it was paused. */
  pausedAt: number | null;
  /** In the slow lane: served at `slowLane.share` of its weight until failures drop. */
  slowLane: boolean;
  /** Final failures within the slow-lane window. */
  recentFailures: number;
  /** Rate limit in use (`false` = none): run-time override, else tier/directory, else the queue's. */
  rateLimit: TenantRateLimit | false;
  /** Rate limit set at run time with `setRateLimit`, if any (`false` = explicitly none). */
  rateLimitOverride: TenantRateLimit | false | null;
  /** While the rate limit holds the tenant back: when (Redis clock, ms) its next job may start. */
  rateLimitedUntil: number | null;
  /**
   * When (ms) its oldest job waiting in the gate or queued by turn was enqueued (BullMQ's
   * `timestamp` of the next job of each lane, and of its first job queued by turn); `null` when
   * none waits. With fair keys, the next job of its keys' turn.
   */
  oldestQueuedAt: number | null;
}
