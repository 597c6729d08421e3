import { MetricsSink } from './metrics-sink.interface';

/**
 * Per-tenant visibility: metrics sink, label cardinality, recording window.
 * @publicApi
 */
export interface TenantQueueMetricsOptions {
  /**
   * Where job metrics go: `'prometheus'` (prom-client, an optional peer dependency), your own
   * `MetricsSink`, or `false` for none. The Redis figures behind `TenantQueueInspector` and the
   * dashboard are recorded either way.
   * @default 'prometheus' when prom-client is installed, otherwise none
   */
  sink?: 'prometheus' | MetricsSink | false;
  /**
   * prom-client `Registry` the Prometheus sink registers its metrics in.
   * @default prom-client's global `register`
   */
  registry?: unknown;
  /**
   * Tenants that get their own `tenant` label, per process, first come first served; later
   * tenants are labelled `other`. Ignored when `labelFor` is given.
   * @default 100
   */
  maxTenantLabels?: number;
  /**
   * Maps a tenant id to its metric label (e.g. its tier). Must return a small, fixed set of
   * values: every distinct value is a time series.
   */
  labelFor?: (tenantId: string) => string;
  /**
   * How often each process writes its aggregated figures to Redis (one script call per 500
   * tenants of each queue with activity).
   * @default 1000
   */
  flushIntervalMs?: number;
  /**
   * Minutes of history behind lag percentiles and failure counts in the inspector (its
   * `history()`, and the dashboard's chart, always cover the last 60 minutes).
   * @default 5
   */
  windowMinutes?: number;
  /**
   * How often the backlog and in-flight gauges are refreshed from Redis (0 = never).
   * @default 15000
   */
  gaugeIntervalMs?: number;
}
