import { randomBytes } from 'node:crypto';
import { RedisClient } from '../core/redis/tenant-queue.redis';
import { MetricSeries } from './metric-series';
import { LAG_FIELDS, RESULT_FIELDS, SECOND_FIELDS, TenantRecord } from './tenant-record';
import { VisibilityKeys } from './visibility-keys';
import { flushVisibility } from './visibility-count.script';

const TENANT_KEEP_MS = 24 * 60 * 60_000;
/** Tenants one flush call writes at most (~2 ms of Redis time a call). */
const FLUSH_CHUNK = 500;
/**
 * Arguments after which a call takes no more tenants (~4,000 counters, a few ms of Redis): a
 * producer's per-second counts, or minutes left behind, make some records much larger.
 */
const FLUSH_ARGS = 10_000;
/** Records idle this long are dropped from memory (their counts are in Redis already). */
const RECORD_IDLE_MS = 10 * 60_000;

/**
 * @internal What one process counts on one queue: a record per tenant, and the records touched
 * since the last flush. A flush writes them with one script call per `FLUSH_CHUNK` tenants
 * (counters only: per tenant-minute hash fields, two totals, the tenant's last activity), so the
 * job path itself makes no Redis call and Redis keeps no job ids.
 */
export class QueueVisibility {
  private readonly records = new Map<string, TenantRecord>();
  private dirty: TenantRecord[] = [];
  private swept = 0;
  /** This writer's id in the `flushed` key, and the number of its last flush call. */
  private readonly writer = randomBytes(8).toString('hex');
  private calls = 0;

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
   * call per `FLUSH_CHUNK` tenants or `FLUSH_ARGS` arguments (`visibility-flush.lua`), each sent
   * once the one before it is answered. A pipelined command per counter cost Node ~17 µs per
   * tenant written, against ~2 for the call's arguments (Redis ~3 against ~4; a scratch probe of
   * 20,000 tenants a flush): at 100,000 tenants nearly every job's tenant is written on its own.
   * A call that fails loses its counts; the others are still written, and the first error is
   * thrown at the end. A call Redis applied but whose reply was lost (Redis killed or the
   * connection cut; ioredis sends it again on reconnect) is applied once: each call carries this
   * writer's next number, and the script skips a number it has seen.
   */
  async flush(redis: RedisClient, now: number, ttlSeconds: number): Promise<void> {
    this.sweep(now);
    if (this.empty) return;
    const records = this.dirty;
    this.dirty = [];
    let failure: unknown;
    let from = 0;
    while (from < records.length) {
      const args: (string | number)[] = [ttlSeconds, '', ++this.calls];
      let to = from;
      while (to < records.length && to - from < FLUSH_CHUNK && args.length < FLUSH_ARGS) {
        this.append(args, records[to++]);
      }
      if (to === records.length) args[1] = now - TENANT_KEEP_MS;
      try {
        await flushVisibility(redis, this.keys, this.writer, args);
      } catch (error) {
        failure ??= error;
      }
      from = to;
    }
    if (failure) throw failure;
  }

  /** A record's counts as the flush script reads them (see `visibility-flush.lua`); zeroed. */
  private append(args: (string | number)[], record: TenantRecord): void {
    args.push(
      record.lastSeen,
      record.tenantId,
      record.enqueuedField,
      record.enqueued,
      record.startedField,
      record.started,
      0,
    );
    const minutesAt = args.length - 1;
    let minutes = 0;
    for (const tally of record.closed) {
      const key = this.keys.minute(record.tenantId, tally.minute);
      if (writeMinute(args, key, tally.lag, tally.results, tally.enqueuedBySecond)) minutes++;
    }
    if (!record.blank) {
      const { lag, results, enqueuedBySecond } = record;
      if (writeMinute(args, record.minuteKey(this.keys), lag, results, enqueuedBySecond)) minutes++;
    }
    args[minutesAt] = minutes;
    record.reset();
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

/**
 * One tenant-minute's non-zero counts as the flush script reads them (its key, the number of
 * pairs, the pairs); nothing when every count is zero. Returns whether it wrote any.
 */
function writeMinute(
  args: (string | number)[],
  key: string,
  lag: number[],
  results: number[],
  bySecond: number[] | null,
): boolean {
  const at = args.length;
  args.push(key, 0);
  for (let i = 0; i < lag.length; i++) if (lag[i]) args.push(LAG_FIELDS[i], lag[i]);
  for (let i = 0; i < results.length; i++) {
    if (results[i]) args.push(RESULT_FIELDS[i], results[i]);
  }
  if (bySecond) {
    for (let s = 0; s < 60; s++) if (bySecond[s]) args.push(SECOND_FIELDS[s], bySecond[s]);
  }
  const pairs = (args.length - at - 2) / 2;
  if (pairs === 0) {
    args.length = at;
    return false;
  }
  args[at + 1] = pairs;
  return true;
}
