import { Inject, Injectable } from '@nestjs/common';
import { tenantKeyPart } from '../core/context/tenant-key';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core/options/core.options';
import { TenantQueueRedis } from '../core/redis/tenant-queue.redis';
import { LuaScripts } from '../core/redis/lua-scripts';
import { ScheduleRecord, StoredSchedule } from './stored-schedule';
import { parseStoredSchedule } from './stored-schedule.dto';

// Where these lived before stored-schedule.ts: the old import paths keep working.
export type { StoredSchedule } from './stored-schedule';
export { cronScheduleId, tenantScheduleId } from './stored-schedule';

/** One compare-and-set claim of a due schedule. */
export interface ScheduleClaim {
  id: string;
  expected: number;
  next: number | null;
  members: string[];
}

const SCRIPTS = new LuaScripts<{
  tqScheduleClaim(due: string, outbox: string, ...args: (string | number)[]): Promise<number[]>;
  tqScheduleRecover(outbox: string, ...args: (string | number)[]): Promise<string[]>;
  tqScheduleSave(defs: string, due: string, keys: string, ...args: string[]): Promise<number>;
}>(__dirname, {
  tqScheduleClaim: { numberOfKeys: 2, file: 'schedule-claim.lua' },
  tqScheduleRecover: { numberOfKeys: 1, file: 'schedule-recover.lua' },
  tqScheduleSave: { numberOfKeys: 3, file: 'schedule-save.lua' },
});

/** One schedule as read at one instant: its record as stored, and its next run. */
export interface ScheduleSnapshot {
  id: string;
  /** The stored JSON, or null when there is none. */
  raw: string | null;
  record: ScheduleRecord;
  next: number | null;
}

/**
 * @internal Redis layout of the scheduler, all under one hash tag `{<prefix>:sched}` so every
 * script runs on Redis Cluster: `defs` (hash id -> JSON), `due` (sorted set id -> next run),
 * `outbox` (sorted set of claimed occurrences -> lease deadline), `tenant:<id>` (set of keys).
 */
@Injectable()
export class ScheduleStore {
  private readonly tag: string;

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS) options: ResolvedTenantQueueOptions,
    private readonly redis: TenantQueueRedis,
  ) {
    this.tag = `{${options.prefix}:sched}`;
  }

  get keys() {
    return {
      defs: `${this.tag}:defs`,
      due: `${this.tag}:due`,
      outbox: `${this.tag}:outbox`,
      tenant: (tenantId: string) => `${this.tag}:tenant:${tenantKeyPart(tenantId)}`,
    };
  }

  private get client() {
    return SCRIPTS.on(this.redis.client);
  }

  /** A schedule's record and next run, read together (what `putIf` compares). */
  async snapshot(id: string): Promise<ScheduleSnapshot> {
    const results = await this.client
      .multi()
      .hget(this.keys.defs, id)
      .zscore(this.keys.due, id)
      .exec();
    const [raw, score] = (results ?? []).map(([error, value]) => {
      if (error) throw error;
      return value as string | null;
    });
    const record = raw === null ? undefined : parseStoredSchedule(id, raw);
    return { id, raw, record, next: score === null ? null : Number(score) };
  }

  /**
   * Writes a schedule and its next run (null leaves it out of the due index), only if its record
   * and next run are still those of `seen`: false when another write or a tick's claim changed
   * them (nothing written). Every write of a schedule goes through here.
   */
  async putIf(
    seen: ScheduleSnapshot,
    schedule: StoredSchedule,
    next: number | null,
  ): Promise<boolean> {
    const tenant = schedule.kind === 'tenant';
    const written = await this.client.tqScheduleSave(
      this.keys.defs,
      this.keys.due,
      tenant ? this.keys.tenant(schedule.tenantId) : this.keys.due,
      seen.id,
      seen.raw === null ? '' : `=${seen.raw}`,
      seen.next === null ? '' : String(seen.next),
      JSON.stringify(schedule),
      next === null ? '' : String(next),
      tenant ? schedule.key : '',
    );
    return Number(written) === 1;
  }

  async remove(id: string, tenantId?: string, key?: string): Promise<boolean> {
    const multi = this.client.multi().hdel(this.keys.defs, id).zrem(this.keys.due, id);
    if (tenantId !== undefined && key !== undefined) multi.srem(this.keys.tenant(tenantId), key);
    const results = await multi.exec();
    return Number(results?.[0]?.[1] ?? 0) > 0;
  }

  /** The records stored under `ids`, in order (unreadable ones say why; none is dropped). */
  async get(ids: string[]): Promise<ScheduleRecord[]> {
    if (ids.length === 0) return [];
    const raw = await this.client.hmget(this.keys.defs, ...ids);
    return raw.map((value, i) => (value === null ? undefined : parseStoredSchedule(ids[i], value)));
  }

  async nextRun(id: string): Promise<number | null> {
    const score = await this.client.zscore(this.keys.due, id);
    return score === null ? null : Number(score);
  }

  async tenantKeys(tenantId: string): Promise<string[]> {
    return (await this.client.smembers(this.keys.tenant(tenantId))).sort();
  }

  /** Schedules due at `now`, oldest first, from the `offset`-th: [id, next run][]. */
  async due(now: number, limit: number, offset = 0): Promise<[string, number][]> {
    const flat = await this.client.zrangebyscore(
      this.keys.due,
      '-inf',
      now,
      'WITHSCORES',
      'LIMIT',
      offset,
      limit,
    );
    const entries: [string, number][] = [];
    for (let i = 0; i < flat.length; i += 2) entries.push([flat[i], Number(flat[i + 1])]);
    return entries;
  }

  /** Atomic claims; returns, per claim, whether this process won it. */
  async claim(leaseUntil: number, claims: ScheduleClaim[]): Promise<boolean[]> {
    if (claims.length === 0) return [];
    const args: (string | number)[] = [leaseUntil, claims.length];
    for (const claim of claims) {
      args.push(claim.id, claim.expected, claim.next ?? '', claim.members.join('\n'));
    }
    const won = await this.client.tqScheduleClaim(this.keys.due, this.keys.outbox, ...args);
    return won.map((value) => Number(value) === 1);
  }

  /** Takes over outbox entries whose lease ran out. */
  recover(now: number, leaseUntil: number, limit: number): Promise<string[]> {
    return this.client.tqScheduleRecover(this.keys.outbox, now, leaseUntil, limit);
  }

  async ack(members: string[]): Promise<void> {
    if (members.length > 0) await this.client.zrem(this.keys.outbox, ...members);
  }

  /** Ends the lease of claimed occurrences, so any process's next tick takes them over. */
  async release(members: string[]): Promise<void> {
    if (members.length === 0) return;
    await this.client.zadd(this.keys.outbox, 'XX', ...members.flatMap((member) => [0, member]));
  }
}
