import { JobResult, MetricsSink, noopMetricsSink } from './metrics-sink.interface';
import { LAG_BUCKETS_MS, bucketOf } from './lag-buckets';

/** Results without a reason, by index: one array slot each, counted without a string key. */
export const PLAIN_RESULTS: readonly JobResult[] = ['completed', 'failed', 'timed_out'];
export const COMPLETED = 0;
export const FAILED = 1;
export const TIMED_OUT = 2;

/**
 * @internal What the job path records for one (queue, tenant label): a lag and a run-time
 * observation, a result. Resolved once per (queue, tenant) and kept, so a job pays no key.
 */
export interface MetricSeries {
  lag(ms: number): void;
  runTime(ms: number): void;
  /** A result without a reason (`PLAIN_RESULTS` index). */
  plain(index: number): void;
  /** A result with a reason (cancelled, dead_lettered): rare, keyed by string. */
  reasoned(result: JobResult, reason: string): void;
}

/**
 * @internal One series counted in local arrays: bucket counts and sums of lag and run time,
 * result counts. The Prometheus sink folds every series into prom-client when it is scraped.
 */
export class CountingSeries implements MetricSeries {
  readonly lagCounts: number[] = new Array<number>(LAG_BUCKETS_MS.length + 1).fill(0);
  lagSum = 0;
  readonly runCounts: number[] = new Array<number>(LAG_BUCKETS_MS.length + 1).fill(0);
  runSum = 0;
  readonly plainCounts: number[] = [0, 0, 0];
  /** `<result>\u0000<reason>` -> count. */
  readonly reasonedCounts = new Map<string, number>();

  constructor(
    readonly queue: string,
    readonly label: string,
  ) {}

  lag(ms: number): void {
    this.lagCounts[bucketOf(ms)]++;
    this.lagSum += ms;
  }

  runTime(ms: number): void {
    this.runCounts[bucketOf(ms)]++;
    this.runSum += ms;
  }

  plain(index: number): void {
    this.plainCounts[index]++;
  }

  reasoned(result: JobResult, reason: string): void {
    const key = `${result}\u0000${reason}`;
    this.reasonedCounts.set(key, (this.reasonedCounts.get(key) ?? 0) + 1);
  }
}

/** @internal A series that calls a user's `MetricsSink` at once (its contract: per call). */
export class ForwardingSeries implements MetricSeries {
  constructor(
    private readonly sink: MetricsSink,
    private readonly queue: string,
    private readonly label: string,
  ) {}

  lag(ms: number): void {
    this.sink.observeLag(this.queue, this.label, ms / 1000);
  }

  runTime(ms: number): void {
    this.sink.observeRunTime(this.queue, this.label, ms / 1000);
  }

  plain(index: number): void {
    this.sink.countResult(this.queue, this.label, PLAIN_RESULTS[index], '');
  }

  reasoned(result: JobResult, reason: string): void {
    this.sink.countResult(this.queue, this.label, result, reason);
  }
}

/** @internal A sink that hands out its own series (the Prometheus sink); others are wrapped. */
export interface SeriesSource {
  series(queue: string, label: string): MetricSeries;
}

export function isSeriesSource(sink: MetricsSink): sink is MetricsSink & SeriesSource {
  return typeof (sink as Partial<SeriesSource>).series === 'function';
}

const NOOP_SERIES: MetricSeries = {
  lag: () => undefined,
  runTime: () => undefined,
  plain: () => undefined,
  reasoned: () => undefined,
};

/** The series of `(queue, label)` on `sink`: its own, none, or one forwarding to its methods. */
export function seriesOf(sink: MetricsSink, queue: string, label: string): MetricSeries {
  if (sink === noopMetricsSink) return NOOP_SERIES;
  if (isSeriesSource(sink)) return sink.series(queue, label);
  return new ForwardingSeries(sink, queue, label);
}
