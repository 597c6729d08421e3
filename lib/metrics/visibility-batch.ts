import { RedisClient } from '../core/redis/tenant-queue.redis';
import { MetricSeries } from './metric-series';
import { TenantRecord } from './tenant-record';
import { flushVisibility } from './visibility-count.script';
import { VisibilityKeys } from './visibility-keys';

const TENANT_KEEP_MS = 24 * 60 * 60_000;
/** Tenants a flush call writes at most (a script call of a few ms at most). */
const FLUSH_CHUNK = 1000;
/** Records idle this long are dropped from memory (their counts are in Redis already). */
const RECORD_IDLE_MS = 10 * 60_000;

/**
 * @internal What one process counts on one queue: a record per tenant, and the records touched
 * since the last flush. A flush writes them in one script call per thousand tenants (counters
 * only: per tenant-minute hash fields, two totals, the tenant's last activity), so the job path
 * itself makes no Redis call and Redis keeps no job ids.
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
   * Writes and clears what was counted; `ttlSeconds` bounds the tenant-minute hashes. One script
   * call per `FLUSH_CHUNK` tenants (visibility-flush.lua), sent together.
   */
  async flush(redis: RedisClient, now: number, ttlSeconds: number): Promise<void> {
    this.sweep(now);
    if (this.empty) return;
    const records = this.dirty;
    this.dirty = [];
    const calls: Promise<number>[] = [];
    for (let from = 0; from < records.length; from += FLUSH_CHUNK) {
      const args: (string | number)[] = [];
      for (let i = from; i < Math.min(records.length, from + FLUSH_CHUNK); i++) {
        const record = records[i];
        args.push(record.tenantId, record.lastSeen, record.enqueued, record.started, 0);
        const at = args.length - 1;
        args[at] = record.writeTo(args);
      }
      calls.push(flushVisibility(redis, this.keys, ttlSeconds, now - TENANT_KEEP_MS, args));
    }
    await Promise.all(calls);
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
