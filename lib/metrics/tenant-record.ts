import { LAG_BUCKETS_MS, bucketOf } from './lag-buckets';
import { MetricSeries } from './metric-series';

/** Result counts kept per tenant-minute in Redis, by index (the inspector reads them back). */
export const RESULT_FIELDS = [
  'completed',
  'failed',
  'timed_out',
  'cancelled',
  'dead_lettered',
] as const;
export type ResultField = (typeof RESULT_FIELDS)[number];

/** One minute's counts of one tenant, left behind when a record moves to the next minute. */
export class MinuteTally {
  constructor(
    readonly minute: number,
    readonly lag: number[],
    readonly results: number[],
    readonly enqueuedBySecond: number[] | null,
  ) {}
}

const zeros = (n: number) => new Array<number>(n).fill(0);

/** The Redis field names of the lag buckets and of the seconds of a minute, made once. */
export const LAG_FIELDS = Array.from({ length: LAG_BUCKETS_MS.length + 1 }, (_, i) => `b${i}`);
export const SECOND_FIELDS = Array.from({ length: 60 }, (_, s) => `e${s}`);

/**
 * @internal Everything one process counts for one tenant on one queue: resolved once per job
 * (one Map lookup), every field declared, so the job path allocates nothing. The Redis part
 * is written and zeroed by each flush; `series` feeds the metrics sink.
 */
export class TenantRecord {
  /** Jobs enqueued and first starts since the last flush. */
  enqueued = 0;
  started = 0;
  /** The minute (ms / 60,000) the counts below belong to. */
  minute = -1;
  readonly lag: number[] = zeros(LAG_BUCKETS_MS.length + 1);
  readonly results: number[] = zeros(RESULT_FIELDS.length);
  /** Jobs enqueued (not delayed) per second of `minute`; only on processes that enqueue. */
  enqueuedBySecond: number[] | null = null;
  /** Whole minutes passed since the last flush (rare: one per minute at most). */
  closed: MinuteTally[] = [];
  /** Something to write since the last flush (the record is in its queue's dirty list). */
  dirty = false;
  /** Nothing counted in `minute` yet. */
  blank = true;
  lastSeen = 0;

  /** The tenant's fields in the totals hash, made once per record. */
  readonly enqueuedField: string;
  readonly startedField: string;
  /** The tenant-minute key of `keyMinute`, made once a minute (see `minuteKey`). */
  private key = '';
  private keyMinute = -1;

  constructor(
    readonly tenantId: string,
    readonly series: MetricSeries,
  ) {
    this.enqueuedField = `${tenantId}|enq`;
    this.startedField = `${tenantId}|started`;
  }

  /** The current minute's key, made anew only when the minute changed since the last call. */
  minuteKey(keys: { minute(tenantId: string, minute: number): string }): string {
    if (this.keyMinute !== this.minute) {
      this.key = keys.minute(this.tenantId, this.minute);
      this.keyMinute = this.minute;
    }
    return this.key;
  }

  /** Moves to the minute of `now` (earlier instants count in the current minute). */
  at(now: number): void {
    const minute = Math.floor(now / 60_000);
    this.lastSeen = now;
    if (minute <= this.minute) return;
    this.closeMinute();
    this.minute = minute;
  }

  firstStart(now: number, lagMs: number): void {
    this.at(now);
    this.started++;
    this.lag[bucketOf(lagMs)]++;
    this.blank = false;
    this.series.lag(lagMs);
  }

  enqueue(now: number, delayed: boolean): void {
    this.at(now);
    this.enqueued++;
    if (!delayed) {
      this.enqueuedBySecond ??= zeros(60);
      this.enqueuedBySecond[Math.floor(now / 1000) % 60]++;
      this.blank = false;
    }
  }

  result(now: number, index: number): void {
    this.at(now);
    this.results[index]++;
    this.blank = false;
  }

  /**
   * After a flush wrote the closed minutes and the current one (read in place): zeroes the
   * record.
   */
  reset(): void {
    if (this.closed.length > 0) this.closed = [];
    if (!this.blank) {
      this.lag.fill(0);
      this.results.fill(0);
      this.enqueuedBySecond?.fill(0);
      this.blank = true;
    }
    this.enqueued = 0;
    this.started = 0;
    this.dirty = false;
  }

  /** Moves the current minute's counts, if any, to `closed`. */
  private closeMinute(): void {
    if (this.blank) return;
    const bySecond = this.enqueuedBySecond?.slice() ?? null;
    this.closed.push(
      new MinuteTally(this.minute, this.lag.slice(), this.results.slice(), bySecond),
    );
    this.lag.fill(0);
    this.results.fill(0);
    this.enqueuedBySecond?.fill(0);
    this.blank = true;
  }
}
