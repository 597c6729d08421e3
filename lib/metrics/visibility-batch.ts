import { RedisClient } from '../core/redis/tenant-queue.redis';
import { MetricSeries } from './metric-series';
import { LAG_FIELDS, RESULT_FIELDS, SECOND_FIELDS, TenantRecord } from './tenant-record';
import { VisibilityKeys } from './visibility-keys';

const TENANT_KEEP_MS = 24 * 60 * 60_000;
/** Tenants one flush pipeline writes at most (a few thousand commands). */
const FLUSH_CHUNK = 1000;
/** Records idle this long are dropped from memory (their counts are in Redis already). */
const RECORD_IDLE_MS = 10 * 60_000;

/**
 * @internal What one process counts on one queue: a record per tenant, and the records touched
 * since the last flush. A flush writes them in one pipelined round trip (counters only: per
 * tenant-minute hash fields, two totals, the tenant's last activity), so the job path itself
 * makes no Redis call and Redis keeps no job ids.
 */
export class QueueVisibility {
  private readonly records = new Map<string, TenantRecord>();
  private dirty: TenantRecord[] = [];
  private swept = 0;

  constructor(
    readonly keys: VisibilityKeys,
    private readonly seriesFor: (tenantId: string) => MetricSeries,
  ) {}

  get empty(): boolean {
    return this.dirty.length === 0;
  }

  /** The tenant's record, made on first use; marked to be written at the next flush. */
  record(tenantId: string): TenantRecord {
    let record = this.records.get(tenantId);
    if (!record)
      this.records.set(tenantId, (record = new TenantRecord(tenantId, this.seriesFor(tenantId))));
    if (!record.dirty) {
      record.dirty = true;
      this.dirty.push(record);
    }
    return record;
  }

  /**
   * Writes and clears what was counted; `ttlSeconds` bounds the tenant-minute hashes. One
   * pipeline per `FLUSH_CHUNK` tenants, each sent once the one before it is answered: its
   * commands die young (one pipeline of every tenant's commands kept them all alive until its
   * reply, and the garbage collector took most of a large flush's time). A chunk that fails loses
   * its counts; the others are still written, and the first error is thrown at the end.
   */
  async flush(redis: RedisClient, now: number, ttlSeconds: number): Promise<void> {
    this.sweep(now);
    if (this.empty) return;
    const records = this.dirty;
    this.dirty = [];
    let failure: unknown;
    for (let from = 0; from < records.length; from += FLUSH_CHUNK) {
      const to = Math.min(records.length, from + FLUSH_CHUNK);
      const pipe = this.chunk(redis.pipeline(), records, from, to, ttlSeconds);
      if (to === records.length)
        pipe.zremrangebyscore(this.keys.tenants, '-inf', now - TENANT_KEEP_MS);
      try {
        const failed = ((await pipe.exec()) ?? []).find(([error]) => error);
        if (failed) throw failed[0];
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure) throw failure;
  }

  /** The commands of `records[from..to)` on `pipe`, each record zeroed. */
  private chunk(
    pipe: Pipeline,
    records: TenantRecord[],
    from: number,
    to: number,
    ttlSeconds: number,
  ): Pipeline {
    const keys = this.keys;
    const seen: (string | number)[] = [];
    for (let i = from; i < to; i++) {
      const record = records[i];
      if (record.enqueued > 0) pipe.hincrby(keys.totals, record.enqueuedField, record.enqueued);
      if (record.started > 0) pipe.hincrby(keys.totals, record.startedField, record.started);
      seen.push(record.lastSeen, record.tenantId);
      for (const tally of record.closed) {
        const key = keys.minute(record.tenantId, tally.minute);
        writeMinute(pipe, key, tally.lag, tally.results, tally.enqueuedBySecond, ttlSeconds);
      }
      if (!record.blank) {
        const { lag, results, enqueuedBySecond } = record;
        writeMinute(pipe, record.minuteKey(keys), lag, results, enqueuedBySecond, ttlSeconds);
      }
      record.reset();
    }
    return pipe.zadd(keys.tenants, ...seen);
  }

  /** Every few minutes, forgets records idle for a while (bounded memory over many tenants). */
  private sweep(now: number): void {
    if (now - this.swept < RECORD_IDLE_MS) return;
    this.swept = now;
    for (const [tenant, record] of this.records) {
      if (!record.dirty && now - record.lastSeen > RECORD_IDLE_MS) this.records.delete(tenant);
    }
  }
}

type Pipeline = ReturnType<RedisClient['pipeline']>;

/** One tenant-minute's non-zero counts into its hash, and its time to live when any. */
function writeMinute(
  pipe: Pipeline,
  key: string,
  lag: number[],
  results: number[],
  bySecond: number[] | null,
  ttlSeconds: number,
): void {
  let any = false;
  for (let i = 0; i < lag.length; i++) {
    if (lag[i]) {
      pipe.hincrby(key, LAG_FIELDS[i], lag[i]);
      any = true;
    }
  }
  for (let i = 0; i < results.length; i++) {
    if (results[i]) {
      pipe.hincrby(key, RESULT_FIELDS[i], results[i]);
      any = true;
    }
  }
  if (bySecond) {
    for (let s = 0; s < 60; s++) {
      if (bySecond[s]) {
        pipe.hincrby(key, SECOND_FIELDS[s], bySecond[s]);
        any = true;
      }
    }
  }
  if (any) pipe.expire(key, ttlSeconds);
}
