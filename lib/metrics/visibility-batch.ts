import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainableCommander } from 'ioredis';
import { RedisClient } from '../tenant-queue.redis';
import { VisibilityKeys } from './visibility-keys';

const PENDING_LUA = readFileSync(join(__dirname, 'visibility-pending.lua'), 'utf8');
// Long enough for any other process's enqueue flush to arrive; short enough to stay small under load.
const STARTED_KEEP_MS = 30_000;
const TENANT_KEEP_MS = 24 * 60 * 60_000;
const CHUNK = 500;
const defined = new WeakSet<object>();

interface TenantTally {
  started: number;
  done: number;
  lastSeen: number;
  /** minute -> hash field -> increment */
  minutes: Map<number, Map<string, number>>;
}

type Pipeline = ChainableCommander & {
  tqVisPending(numberOfKeys: number, ...args: (string | number)[]): Pipeline;
};

/**
 * @internal What one process saw on one queue since its last flush: waiting jobs, first starts,
 * per tenant-minute lag buckets and results, and in-flight totals. Written to Redis in one
 * pipelined round trip, so recording costs the job path no Redis call.
 */
export class VisibilityBatch {
  private pending: [jobId: string, tenant: string, readyAt: number][] = [];
  private starts: [jobId: string, tenant: string][] = [];
  private tenants = new Map<string, TenantTally>();

  constructor(readonly keys: VisibilityKeys) {}

  get empty(): boolean {
    return this.tenants.size === 0;
  }

  enqueued(jobId: string, tenant: string, readyAt: number, now: number): void {
    this.pending.push([jobId, tenant, readyAt]);
    this.tally(tenant, now);
  }

  started(jobId: string, tenant: string, now: number): void {
    this.starts.push([jobId, tenant]);
    this.tally(tenant, now).started++;
  }

  /** Adds one to a field of the tenant-minute hash (`b<i>` lag buckets, results). */
  count(tenant: string, now: number, field: string): void {
    const minute = Math.floor(now / 60_000);
    const tally = this.tally(tenant, now);
    let fields = tally.minutes.get(minute);
    if (!fields) tally.minutes.set(minute, (fields = new Map()));
    fields.set(field, (fields.get(field) ?? 0) + 1);
  }

  finished(tenant: string, now: number): void {
    this.tally(tenant, now).done++;
  }

  private tally(tenant: string, now: number): TenantTally {
    let tally = this.tenants.get(tenant);
    if (!tally) {
      tally = { started: 0, done: 0, lastSeen: now, minutes: new Map() };
      this.tenants.set(tenant, tally);
    } else tally.lastSeen = now;
    return tally;
  }

  /** Writes and clears the batch; `ttlSeconds` bounds the tenant-minute hashes. */
  async flush(redis: RedisClient, now: number, ttlSeconds: number): Promise<void> {
    if (this.empty) return;
    const { pending, starts, tenants } = this;
    this.pending = [];
    this.starts = [];
    this.tenants = new Map();
    if (!defined.has(redis)) {
      redis.defineCommand('tqVisPending', { lua: PENDING_LUA });
      defined.add(redis);
    }
    const keys = this.keys;
    const pipe = redis.pipeline() as Pipeline;
    for (let i = 0; i < pending.length; i += CHUNK) {
      const chunk = pending.slice(i, i + CHUNK);
      pipe.tqVisPending(
        chunk.length + 1,
        keys.started,
        ...chunk.map(([, tenant]) => keys.pending(tenant)),
        ...chunk.flatMap(([jobId, , readyAt]) => [jobId, readyAt]),
      );
    }
    const byTenant = new Map<string, string[]>();
    for (const [jobId, tenant] of starts) {
      const ids = byTenant.get(tenant);
      if (ids) ids.push(jobId);
      else byTenant.set(tenant, [jobId]);
    }
    for (let i = 0; i < starts.length; i += CHUNK) {
      pipe.zadd(keys.started, ...starts.slice(i, i + CHUNK).flatMap(([jobId]) => [now, jobId]));
    }
    for (const [tenant, ids] of byTenant) pipe.zrem(keys.pending(tenant), ...ids);
    pipe.zremrangebyscore(keys.started, '-inf', now - STARTED_KEEP_MS);
    for (const [tenant, tally] of tenants) {
      for (const [minute, fields] of tally.minutes) {
        const key = keys.minute(tenant, minute);
        for (const [field, by] of fields) pipe.hincrby(key, field, by);
        pipe.expire(key, ttlSeconds);
      }
      if (tally.started > 0) pipe.hincrby(keys.totals, `${tenant}|started`, tally.started);
      if (tally.done > 0) pipe.hincrby(keys.totals, `${tenant}|done`, tally.done);
    }
    pipe.zadd(keys.tenants, ...[...tenants].flatMap(([tenant, t]) => [t.lastSeen, tenant]));
    pipe.zremrangebyscore(keys.tenants, '-inf', now - TENANT_KEEP_MS);
    const results = (await pipe.exec()) ?? [];
    const failed = results.find(([error]) => error);
    if (failed) throw failed[0];
  }
}
