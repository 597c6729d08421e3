/**
 * Lag percentiles (ms) over the inspector's window; null when no job started in it.
 * @publicApi
 */
export interface TenantLagStats {
  p50: number | null;
  p95: number | null;
  p99: number | null;
  /** Jobs whose first start fell in the window. */
  samples: number;
  windowMinutes: number;
}

/**
 * Attempt results over the inspector's window (see `JobResult`).
 * @publicApi
 */
export interface TenantResultCounts {
  completed: number;
  failed: number;
  timedOut: number;
  cancelled: number;
  deadLettered: number;
}

/**
 * One tenant on one queue, as every process in the cluster sees it (read from Redis).
 * @publicApi
 */
export interface TenantQueueStats {
  queue: string;
  tenantId: string;
  /** Jobs waiting to start (delayed ones included). */
  backlog: number;
  /** Jobs started and not finished (retries waiting for their backoff included). */
  inFlight: number;
  /** Age (ms) of the oldest job waiting to start that is due; 0 when none. */
  oldestWaitingMs: number;
  lag: TenantLagStats;
  /** The larger of `oldestWaitingMs` and the window's p95 lag: how late this tenant is now. */
  currentLagMs: number;
  results: TenantResultCounts;
  /** Dead letters kept for the tenant on this queue now. */
  deadLetters: number;
  paused: boolean;
  /** While paused: when it was paused (ms, Redis clock); null otherwise. */
  pausedAt: number | null;
  slowLane: boolean;
  /** Held back by its rate limit right now: its lag is its own limit, not the workers. */
  rateLimited: boolean;
  /** While rate limited: when its next job may start (ms, Redis clock); null otherwise. */
  rateLimitedUntil: number | null;
  /** `fair-gate` when backlog/in-flight/paused come from the queue's fair gate. */
  source: 'fair-gate' | 'counters';
}

/**
 * Which tenants `TenantQueueInspector.listTenants(query)` reports.
 * @publicApi
 */
export interface TenantListQuery {
  /** Only this queue (default: every registered queue). */
  queue?: string;
  /**
   * Tenants listed per queue: those with the largest `currentLagMs` among the `limit` most
   * recently active and the `limit` whose jobs have waited longest (in BullMQ or a fair gate).
   * @default 100 (at most 1000)
   */
  limit?: number;
}

/** @internal One tenant's backlog and in-flight, as `forEachTenantCount` reads them. */
export interface TenantCount {
  tenantId: string;
  backlog: number;
  inFlight: number;
}
