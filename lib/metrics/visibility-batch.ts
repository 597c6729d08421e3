import { RedisClient } from '../core/redis/tenant-queue.redis';
import { MetricSeries } from './metric-series';
import { RESULT_FIELDS, TenantRecord } from './tenant-record';
import { VisibilityKeys } from './visibility-keys';

const TENANT_KEEP_MS = 24 * 60 * 60_000;
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

  /** Writes and clears what was counted; `ttlSeconds` bounds the tenant-minute hashes. */
  async flush(redis: RedisClient, now: number, ttlSeconds: number): Promise<void> {
    this.sweep(now);
    if (this.empty) return;
    const records = this.dirty;
    this.dirty = [];
    const keys = this.keys;
    const pipe = redis.pipeline();
    const seen: (string | number)[] = [];
    for (const record of records) {
      const tenant = record.tenantId;
      if (record.enqueued > 0) pipe.hincrby(keys.totals, `${tenant}|enq`, record.enqueued);
      if (record.started > 0) pipe.hincrby(keys.totals, `${tenant}|started`, record.started);
      seen.push(record.lastSeen, tenant);
      for (const tally of record.take()) {
        const fields: (string | number)[] = [];
        for (let i = 0; i < tally.lag.length; i++)
          if (tally.lag[i]) fields.push(`b${i}`, tally.lag[i]);
        for (let i = 0; i < RESULT_FIELDS.length; i++) {
          if (tally.results[i]) fields.push(RESULT_FIELDS[i], tally.results[i]);
        }
        const bySecond = tally.enqueuedBySecond;
        if (bySecond)
          for (let s = 0; s < 60; s++) if (bySecond[s]) fields.push(`e${s}`, bySecond[s]);
        if (fields.length === 0) continue;
        const key = keys.minute(tenant, tally.minute);
        for (let i = 0; i < fields.length; i += 2)
          pipe.hincrby(key, fields[i] as string, fields[i + 1]);
        pipe.expire(key, ttlSeconds);
      }
    }
    pipe.zadd(keys.tenants, ...seen);
    pipe.zremrangebyscore(keys.tenants, '-inf', now - TENANT_KEEP_MS);
    const results = (await pipe.exec()) ?? [];
    const failed = results.find(([error]) => error);
    if (failed) throw failed[0];
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
