/**
 * Outcome of one attempt: `completed`; `failed` or `timed_out` (the attempt failed and BullMQ
 * retries it); `cancelled` (a guard or the runner refused it; `reason` is the cancel reason);
 * `dead_lettered` (failed for good; `reason` is TIMEOUT, STALLED, NON_RETRYABLE or ATTEMPTS_EXHAUSTED).
 * @publicApi
 */
export type JobResult = 'completed' | 'failed' | 'timed_out' | 'cancelled' | 'dead_lettered';

/**
 * Where the module's job metrics go. `tenant` is already folded to a bounded label (see
 * `maxTenantLabels` and `labelFor`). Calls are synchronous and on the hot path: keep them cheap.
 * @publicApi
 */
export interface MetricsSink {
  /** Seconds from enqueue (or scheduled time) to the start of the first attempt. */
  observeLag(queue: string, tenant: string, seconds: number): void;
  /** Seconds one attempt ran. */
  observeRunTime(queue: string, tenant: string, seconds: number): void;
  /** One attempt ended; `reason` is '' unless the result has one. */
  countResult(queue: string, tenant: string, result: JobResult, reason: string): void;
  /** Cluster-wide jobs waiting (gauge), refreshed from Redis. */
  setBacklog(queue: string, tenant: string, value: number): void;
  /** Cluster-wide jobs started and not finished (gauge), refreshed from Redis. */
  setInFlight(queue: string, tenant: string, value: number): void;
}

/** Token of the sink in use (the Prometheus sink, yours, or a no-op). */
export const MetricsSink = Symbol('MetricsSink');

/**
 * Drops everything; used when `metrics.sink` is `false` or prom-client is not installed.
 * @publicApi
 */
export const noopMetricsSink: MetricsSink = {
  observeLag: () => undefined,
  observeRunTime: () => undefined,
  countResult: () => undefined,
  setBacklog: () => undefined,
  setInFlight: () => undefined,
};
