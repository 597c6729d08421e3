import type * as PromClient from 'prom-client';
import { MetricsSink, JobResult } from './metrics-sink.interface';
import { LAG_BUCKETS_MS } from './lag-buckets';

type Observer = { observe(value: number): void };

const SECONDS = LAG_BUCKETS_MS.map((ms) => ms / 1000);

/** Loads prom-client, or undefined when the optional peer dependency is not installed. */
export function loadPromClient(): typeof PromClient | undefined {
  try {
    // Lazy on purpose: prom-client is an optional peer dependency.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('prom-client') as typeof PromClient;
  } catch {
    return undefined;
  }
}

/**
 * `MetricsSink` on prom-client: `tenant_queue_scheduling_lag_seconds` and
 * `tenant_queue_run_duration_seconds` histograms, `tenant_queue_jobs_total` counter,
 * `tenant_queue_backlog` and `tenant_queue_in_flight` gauges, all labelled `queue` and `tenant`.
 * Metrics already in the registry (a second app in one process) are reused.
 */
export class PrometheusMetricsSink implements MetricsSink {
  private readonly lag: PromClient.Histogram<'queue' | 'tenant'>;
  private readonly runTime: PromClient.Histogram<'queue' | 'tenant'>;
  private readonly results: PromClient.Counter<'queue' | 'tenant' | 'result' | 'reason'>;
  private readonly backlog: PromClient.Gauge<'queue' | 'tenant'>;
  private readonly inFlight: PromClient.Gauge<'queue' | 'tenant'>;

  constructor(prom: typeof PromClient, registry: PromClient.Registry = prom.register) {
    const registers = [registry];
    const reuse = <T>(name: string, make: () => T): T =>
      (registry.getSingleMetric(name) as T | undefined) ?? make();
    this.lag = reuse(
      'tenant_queue_scheduling_lag_seconds',
      () =>
        new prom.Histogram({
          name: 'tenant_queue_scheduling_lag_seconds',
          help: 'Seconds from enqueue (or scheduled time) to the start of a job',
          labelNames: ['queue', 'tenant'],
          buckets: SECONDS,
          registers,
        }),
    );
    this.runTime = reuse(
      'tenant_queue_run_duration_seconds',
      () =>
        new prom.Histogram({
          name: 'tenant_queue_run_duration_seconds',
          help: 'Seconds one job attempt ran',
          labelNames: ['queue', 'tenant'],
          buckets: SECONDS,
          registers,
        }),
    );
    this.results = reuse(
      'tenant_queue_jobs_total',
      () =>
        new prom.Counter({
          name: 'tenant_queue_jobs_total',
          help: 'Job attempts by result (completed, failed, timed_out, cancelled, dead_lettered)',
          labelNames: ['queue', 'tenant', 'result', 'reason'],
          registers,
        }),
    );
    this.backlog = reuse(
      'tenant_queue_backlog',
      () =>
        new prom.Gauge({
          name: 'tenant_queue_backlog',
          help: 'Jobs waiting to start, cluster-wide (every process reports it: aggregate with max)',
          labelNames: ['queue', 'tenant'],
          registers,
        }),
    );
    this.inFlight = reuse(
      'tenant_queue_in_flight',
      () =>
        new prom.Gauge({
          name: 'tenant_queue_in_flight',
          help: 'Jobs started and not finished, cluster-wide (aggregate with max)',
          labelNames: ['queue', 'tenant'],
          registers,
        }),
    );
  }

  // Label children are cached: prom-client hashes a labels object on every unbound call.
  private readonly children = new Map<string, { lag: Observer; runTime: Observer }>();
  private readonly resultChildren = new Map<string, { inc(): void }>();

  private child(queue: string, tenant: string) {
    const key = `${queue}\u0000${tenant}`;
    let child = this.children.get(key);
    if (!child) {
      child = { lag: this.lag.labels(queue, tenant), runTime: this.runTime.labels(queue, tenant) };
      this.children.set(key, child);
    }
    return child;
  }

  observeLag(queue: string, tenant: string, seconds: number): void {
    this.child(queue, tenant).lag.observe(seconds);
  }

  observeRunTime(queue: string, tenant: string, seconds: number): void {
    this.child(queue, tenant).runTime.observe(seconds);
  }

  countResult(queue: string, tenant: string, result: JobResult, reason: string): void {
    const key = `${queue}\u0000${tenant}\u0000${result}\u0000${reason}`;
    let child = this.resultChildren.get(key);
    if (!child) {
      child = this.results.labels(queue, tenant, result, reason);
      this.resultChildren.set(key, child);
    }
    child.inc();
  }

  setBacklog(queue: string, tenant: string, value: number): void {
    this.backlog.set({ queue, tenant }, value);
  }

  setInFlight(queue: string, tenant: string, value: number): void {
    this.inFlight.set({ queue, tenant }, value);
  }
}
