import type * as PromClient from 'prom-client';
import { MetricsSink, JobResult } from './metrics-sink.interface';
import { LAG_BUCKETS_MS } from './lag-buckets';
import { CountingSeries, MetricSeries, PLAIN_RESULTS, SeriesSource } from './metric-series';

const SECONDS = LAG_BUCKETS_MS.map((ms) => ms / 1000);
type Labels = 'queue' | 'tenant';
/** prom-client keeps a histogram's values in `hashMap` (stable from v12 to v15). */
type HistogramValues = {
  hashMap: Record<
    string,
    { labels: object; bucketValues: Record<number, number>; sum: number; count: number }
  >;
};

/** The sinks whose series each metric this module created folds when it is collected. */
const sources = new WeakMap<object, Set<PrometheusMetricsSink>>();

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
 * Jobs are counted in local arrays (one series per queue and tenant label, see `series`) and
 * folded into the histograms and the counter in their `collect()` hook, when scraped.
 * Metrics already in the registry (a second app in one process) are reused.
 */
export class PrometheusMetricsSink implements MetricsSink, SeriesSource {
  private readonly lagMetric: PromClient.Histogram<Labels>;
  private readonly runTimeMetric: PromClient.Histogram<Labels>;
  private readonly results: PromClient.Counter<Labels | 'result' | 'reason'>;
  private readonly backlog: PromClient.Gauge<Labels>;
  private readonly inFlight: PromClient.Gauge<Labels>;
  /** queue -> tenant label -> series (Maps: labels are tenant ids). */
  private readonly byQueue = new Map<string, Map<string, CountingSeries>>();

  constructor(prom: typeof PromClient, registry: PromClient.Registry = prom.register) {
    const registers = [registry];
    const reuse = <T extends object>(name: string, make: () => T): T => {
      const metric = (registry.getSingleMetric(name) as T | undefined) ?? make();
      let set = sources.get(metric);
      if (!set) sources.set(metric, (set = new Set()));
      set.add(this);
      return metric;
    };
    const histogram = (
      name: string,
      help: string,
      pick: (s: CountingSeries) => [number[], number],
    ) =>
      reuse(
        name,
        () =>
          new prom.Histogram({
            name,
            help,
            labelNames: ['queue', 'tenant'],
            buckets: SECONDS,
            registers,
            collect() {
              foldHistogram(this, pick);
            },
          }),
      );
    this.lagMetric = histogram(
      'tenant_queue_scheduling_lag_seconds',
      'Seconds from enqueue (or scheduled time) to the start of a job',
      (s) => [s.lagCounts, s.lagSum],
    );
    this.runTimeMetric = histogram(
      'tenant_queue_run_duration_seconds',
      'Seconds one job attempt ran',
      (s) => [s.runCounts, s.runSum],
    );
    this.results = reuse(
      'tenant_queue_jobs_total',
      () =>
        new prom.Counter({
          name: 'tenant_queue_jobs_total',
          help: 'Job attempts by result (completed, failed, timed_out, cancelled, dead_lettered)',
          labelNames: ['queue', 'tenant', 'result', 'reason'],
          registers,
          collect() {
            foldCounter(this);
          },
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

  /** The series of one queue and tenant label, made on first use and kept. */
  series(queue: string, label: string): CountingSeries {
    let labels = this.byQueue.get(queue);
    if (!labels) this.byQueue.set(queue, (labels = new Map()));
    let series = labels.get(label);
    if (!series) labels.set(label, (series = new CountingSeries(queue, label)));
    return series;
  }

  /** @internal Every series of this sink (for the collect hooks). */
  eachSeries(visit: (series: CountingSeries) => void): void {
    for (const labels of this.byQueue.values()) for (const series of labels.values()) visit(series);
  }

  observeLag(queue: string, tenant: string, seconds: number): void {
    this.series(queue, tenant).lag(seconds * 1000);
  }

  observeRunTime(queue: string, tenant: string, seconds: number): void {
    this.series(queue, tenant).runTime(seconds * 1000);
  }

  countResult(queue: string, tenant: string, result: JobResult, reason: string): void {
    const series: MetricSeries = this.series(queue, tenant);
    const index = reason === '' ? PLAIN_RESULTS.indexOf(result) : -1;
    if (index >= 0) series.plain(index);
    else series.reasoned(result, reason);
  }

  setBacklog(queue: string, tenant: string, value: number): void {
    this.backlog.set({ queue, tenant }, value);
  }

  setInFlight(queue: string, tenant: string, value: number): void {
    this.inFlight.set({ queue, tenant }, value);
  }
}

function eachSource(metric: object, visit: (series: CountingSeries) => void): void {
  for (const sink of sources.get(metric) ?? []) sink.eachSeries(visit);
}

/** Rebuilds a histogram's values from the local bucket counts of every series (sums in s). */
function foldHistogram(
  metric: PromClient.Histogram<Labels>,
  pick: (series: CountingSeries) => [number[], number],
): void {
  metric.reset();
  const values = (metric as unknown as HistogramValues).hashMap;
  eachSource(metric, (series) => {
    const [counts, sumMs] = pick(series);
    let count = 0;
    for (const n of counts) count += n;
    if (count === 0) return;
    const key = `${series.queue}\u0000${series.label}`;
    let entry = values[key];
    if (!entry) {
      const bucketValues: Record<number, number> = {};
      for (const bound of SECONDS) bucketValues[bound] = 0;
      entry = {
        labels: { queue: series.queue, tenant: series.label },
        bucketValues,
        sum: 0,
        count: 0,
      };
      values[key] = entry;
    }
    for (let i = 0; i < SECONDS.length; i++) entry.bucketValues[SECONDS[i]] += counts[i];
    entry.sum += sumMs / 1000;
    entry.count += count;
  });
}

function foldCounter(metric: PromClient.Counter<Labels | 'result' | 'reason'>): void {
  metric.reset();
  eachSource(metric, (series) => {
    const { queue, label: tenant } = series;
    // prom-client keeps the labels object it is given: one per value.
    for (let i = 0; i < PLAIN_RESULTS.length; i++) {
      if (series.plainCounts[i] === 0) continue;
      metric.inc({ queue, tenant, result: PLAIN_RESULTS[i], reason: '' }, series.plainCounts[i]);
    }
    for (const [key, n] of series.reasonedCounts) {
      const split = key.indexOf('\u0000');
      metric.inc({ queue, tenant, result: key.slice(0, split), reason: key.slice(split + 1) }, n);
    }
  });
}
