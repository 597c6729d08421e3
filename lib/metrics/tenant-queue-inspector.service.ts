import { Inject, Injectable, Optional } from '@nestjs/common';
import { DeadLettersScript } from '../dead-letters/dead-letters.script';
import { TenantEnvelopeCodec } from '../envelope/tenant-envelope.codec';
import { TenantQueueRedis } from '../tenant-queue.redis';
import { TenantQueueRegistry } from '../tenant-queue.registry';
import { LAG_BUCKETS_MS, quantileOf } from './lag-buckets';
import { ResolvedMetricsOptions, TENANT_QUEUE_METRICS_OPTIONS } from './metrics.options';
import { TenantQueueStateSource } from './tenant-queue-state-source.interface';
import { TenantListQuery, TenantQueueStats } from './tenant-queue-stats.interface';
import { VisibilityKeys } from './visibility-keys';

const HEAD = 5;
const RESULT_FIELDS = ['completed', 'failed', 'timed_out', 'cancelled', 'dead_lettered'] as const;

/**
 * Per-tenant figures of each queue: backlog, in-flight, oldest waiting age, lag percentiles,
 * failures, dead letters, paused and slow-lane state. Everything is read from Redis, so any
 * process answers for the whole cluster (figures lag by at most one flush interval).
 */
@Injectable()
export class TenantQueueInspector {
  constructor(
    private readonly redis: TenantQueueRedis,
    private readonly registry: TenantQueueRegistry,
    private readonly codec: TenantEnvelopeCodec,
    @Inject(TENANT_QUEUE_METRICS_OPTIONS) private readonly options: ResolvedMetricsOptions,
    @Optional()
    @Inject(TenantQueueStateSource)
    private readonly stateSource?: TenantQueueStateSource,
  ) {}

  /** One tenant on one queue. */
  async getTenant(queue: string, tenantId: string): Promise<TenantQueueStats> {
    this.codec.assertTenantId(tenantId);
    const keys = new VisibilityKeys(this.registry.getQueue(queue).definition);
    return this.read(keys, tenantId, await this.redisTime());
  }

  /** The tenants active lately (per queue, up to `limit`), latest first by `currentLagMs`. */
  async listTenants(query: TenantListQuery = {}): Promise<TenantQueueStats[]> {
    const limit = Math.min(1000, Math.max(1, Math.floor(query.limit ?? 100)));
    const names = query.queue === undefined ? this.registry.getQueueNames() : [query.queue];
    const now = await this.redisTime();
    const all: TenantQueueStats[] = [];
    for (const name of names) {
      const keys = new VisibilityKeys(this.registry.getQueue(name).definition);
      const tenants = await this.redis.client.zrevrange(keys.tenants, 0, limit - 1);
      const stats = await Promise.all(
        tenants.filter((t) => t !== '-').map((t) => this.read(keys, t, now)),
      );
      all.push(...stats);
    }
    return all.sort(
      (a, b) => b.currentLagMs - a.currentLagMs || a.tenantId.localeCompare(b.tenantId),
    );
  }

  /** Queue names the inspector can read. */
  queueNames(): string[] {
    return this.registry.getQueueNames();
  }

  private async read(
    keys: VisibilityKeys,
    tenantId: string,
    now: number,
  ): Promise<TenantQueueStats> {
    const queue = keys.definition.name;
    const window = this.options.windowMinutes;
    const current = Math.floor(now / 60_000);
    const minuteKeys = Array.from({ length: window }, (_, i) => keys.minute(tenantId, current - i));
    const pipe = this.redis.client.pipeline();
    pipe.zcard(keys.pending(tenantId));
    pipe.hmget(keys.totals, `${tenantId}|started`, `${tenantId}|done`);
    pipe.zcard(DeadLettersScript.tenantKeys(keys.definition, tenantId)[0]);
    for (const key of minuteKeys) pipe.hgetall(key);
    const replies = ((await pipe.exec()) ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const [pendingCount, totals, deadLetters, ...minutes] = replies as [
      number,
      (string | null)[],
      number,
      ...Record<string, string>[],
    ];
    const buckets = new Array<number>(LAG_BUCKETS_MS.length + 1).fill(0);
    const results = Object.fromEntries(RESULT_FIELDS.map((f) => [f, 0])) as Record<
      (typeof RESULT_FIELDS)[number],
      number
    >;
    for (const minute of minutes) {
      for (const [field, value] of Object.entries(minute)) {
        if (field[0] === 'b') buckets[Number(field.slice(1))] += Number(value);
        else if (field in results) results[field as keyof typeof results] += Number(value);
      }
    }
    const fair = this.stateSource?.handles(queue) ?? false;
    const head = await this.oldestWaiting(keys, tenantId, now, !fair);
    const live = fair ? await this.stateSource!.getTenant(queue, tenantId) : undefined;
    const p95 = quantileOf(buckets, 0.95);
    return {
      queue,
      tenantId,
      backlog: live?.backlog ?? Math.max(0, pendingCount - head.ghosts),
      inFlight: live?.inFlight ?? Math.max(0, Number(totals[0] ?? 0) - Number(totals[1] ?? 0)),
      oldestWaitingMs: head.ageMs,
      lag: {
        p50: quantileOf(buckets, 0.5),
        p95,
        p99: quantileOf(buckets, 0.99),
        samples: buckets.reduce((sum, n) => sum + n, 0),
        windowMinutes: window,
      },
      currentLagMs: Math.max(head.ageMs, p95 ?? 0),
      results: {
        completed: results.completed,
        failed: results.failed,
        timedOut: results.timed_out,
        cancelled: results.cancelled,
        deadLettered: results.dead_lettered,
      },
      deadLetters,
      paused: live?.paused ?? false,
      slowLane: live?.slowLane ?? false,
      rateLimited: live?.rateLimited ?? false,
      source: fair ? 'fair-gate' : 'counters',
    };
  }

  /**
   * Age of the oldest due waiting job. Entries whose job already started (or is gone) are
   * dropped on the way: a start recorded before its enqueue by another process leaves one.
   */
  private async oldestWaiting(keys: VisibilityKeys, tenantId: string, now: number, clean: boolean) {
    const redis = this.redis.client;
    let ghosts = 0;
    for (let round = 0; round < 3; round++) {
      const flat = await redis.zrange(keys.pending(tenantId), 0, String(HEAD - 1), 'WITHSCORES');
      if (flat.length === 0) return { ageMs: 0, ghosts };
      const ids = flat.filter((_, i) => i % 2 === 0);
      if (!clean) return { ageMs: Math.max(0, now - Number(flat[1])), ghosts };
      const pipe = redis.pipeline();
      for (const id of ids) {
        const jobKey = DeadLettersScript.jobKey(keys.definition, id);
        pipe.exists(jobKey).hget(jobKey, 'processedOn');
      }
      const replies = ((await pipe.exec()) ?? []).map(([, value]) => value);
      const isStale = (i: number) => replies[i * 2] === 0 || replies[i * 2 + 1] !== null;
      const stale = ids.filter((_, i) => isStale(i));
      if (!isStale(0)) {
        if (stale.length > 0) ghosts += await redis.zrem(keys.pending(tenantId), ...stale);
        return { ageMs: Math.max(0, now - Number(flat[1])), ghosts };
      }
      ghosts += await redis.zrem(keys.pending(tenantId), ...stale);
    }
    return { ageMs: 0, ghosts };
  }

  private async redisTime(): Promise<number> {
    const [seconds, micros] = await this.redis.client.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }
}
