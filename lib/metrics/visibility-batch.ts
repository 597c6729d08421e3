import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainableCommander } from 'ioredis';
import { RedisClient } from '../tenant-queue.redis';
import { VisibilityKeys } from './visibility-keys';

const PENDING_LUA = readFileSync(join(__dirname, 'visibility-pending.lua'), 'utf8');
const STARTED_KEEP_MS = 10 * 60_000;
const TENANT_KEEP_MS = 24 * 60 * 60_000;
const CHUNK = 500;
const defined = new WeakSet<object>();

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
  private minutes = new Map<string, Map<string, number>>();
  private totals = new Map<string, number>();
  private activity = new Map<string, number>();

  constructor(readonly keys: VisibilityKeys) {}

  get empty(): boolean {
    return this.activity.size === 0;
  }

  enqueued(jobId: string, tenant: string, readyAt: number, now: number): void {
    this.pending.push([jobId, tenant, readyAt]);
    this.activity.set(tenant, now);
  }

  started(jobId: string, tenant: string, now: number): void {
    this.starts.push([jobId, tenant]);
    this.add(`${tenant}|started`, 1);
    this.activity.set(tenant, now);
  }

  /** Adds to a field of the tenant-minute hash (`b<i>` lag buckets, results). */
  count(tenant: string, now: number, field: string, by = 1): void {
    const key = this.keys.minute(tenant, Math.floor(now / 60_000));
    let fields = this.minutes.get(key);
    if (!fields) this.minutes.set(key, (fields = new Map()));
    fields.set(field, (fields.get(field) ?? 0) + by);
    this.activity.set(tenant, now);
  }

  finished(tenant: string, now: number): void {
    this.add(`${tenant}|done`, 1);
    this.activity.set(tenant, now);
  }

  private add(field: string, by: number): void {
    this.totals.set(field, (this.totals.get(field) ?? 0) + by);
  }

  /** Writes and clears the batch; `ttlSeconds` bounds the tenant-minute hashes. */
  async flush(redis: RedisClient, now: number, ttlSeconds: number): Promise<void> {
    if (this.empty) return;
    const { pending, starts, minutes, totals, activity } = this;
    this.pending = [];
    this.starts = [];
    this.minutes = new Map();
    this.totals = new Map();
    this.activity = new Map();
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
    for (const [key, fields] of minutes) {
      for (const [field, by] of fields) pipe.hincrby(key, field, by);
      pipe.expire(key, ttlSeconds);
    }
    for (const [field, by] of totals) pipe.hincrby(keys.totals, field, by);
    pipe.zadd(keys.tenants, ...[...activity].flatMap(([tenant, at]) => [at, tenant]));
    pipe.zremrangebyscore(keys.tenants, '-inf', now - TENANT_KEEP_MS);
    const results = (await pipe.exec()) ?? [];
    const failed = results.find(([error]) => error);
    if (failed) throw failed[0];
  }
}
