/** One tenant's fairness state on one queue, as `TenantFairness.getTenant` reads it from Redis. */
export interface TenantFairnessState {
  queue: string;
  tenantId: string;
  /** Jobs waiting in the gate, not yet admitted into BullMQ. */
  backlog: number;
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
  paused: boolean;
  /** In the slow lane: served at `slowLane.share` of its weight until failures drop. */
  slowLane: boolean;
  /** Final failures within the slow-lane window. */
  recentFailures: number;
}
