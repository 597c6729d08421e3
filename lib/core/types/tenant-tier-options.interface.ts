/**
 * Jobs of one tenant started per interval, with a burst, across every process (GCRA in Redis).
 * `{ max: 20, per: 60_000 }` is 20 jobs a minute, one every 3 s; `burst: 5` lets 5 start at once
 * after a quiet spell, never more than `burst + elapsed / (per / max)` in any stretch of time.
 * @publicApi
 */
export interface TenantRateLimit {
  /** Jobs per `per` milliseconds. */
  max: number;
  /** Length of the interval, in milliseconds. */
  per: number;
  /**
   * Jobs that may start back to back after a quiet spell.
   * @default 1
   */
  burst?: number;
}

/**
 * What a tier (or one tenant) may set about its jobs on a queue.
 * @publicApi
 */
export interface TenantLimits {
  /** Fair-share weight (default: the queue's `fairness.defaultWeight`). */
  weight?: number;
  /** Most jobs of this tenant admitted at once on the queue, across all workers; 0 = no cap. */
  maxConcurrency?: number;
  /**
   * Slots this tenant keeps on the queue whenever it has work, even under other tenants'
   * floods (its cap stays the burst ceiling); 0 = no floor. Not above `maxConcurrency`.
   */
  minConcurrency?: number;
  /** Jobs started per interval; `false` lifts the queue's default limit. */
  rateLimit?: TenantRateLimit | false;
  /**
   * The tenant's weight inside each lane of the queue (`{ interactive: 3, bulk: 1 }`); a lane not
   * named here uses `weight`.
   */
  lanes?: Record<string, number>;
}

/**
 * One tier: limits for every queue, per-queue overrides, and the dedicated pools it uses.
 * @publicApi
 */
export interface TenantTierOptions extends TenantLimits {
  /** Per-queue overrides of the limits above, by queue name. */
  queues?: Record<string, TenantLimits>;
  /**
   * Dedicated pool per queue for this tier's tenants: `{ imports: 'imports-enterprise' }`. The
   * pool must be declared by the queue (`registerQueue({ pools })`).
   */
  pools?: Record<string, string>;
}
