import { Injectable, Logger } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  InMemoryTenantDirectory,
  InvalidScheduleError,
  TenantCron,
  TenantCronRun,
  TenantScheduler,
  TenantSchedulerOptions,
  tenantScheduleJobId,
} from '../../../lib';
import { ScheduleStore } from '../../../lib/scheduler/schedule.store';
import { cronScheduleId, tenantScheduleId } from '../../../lib/scheduler/stored-schedule';
import { parseStoredSchedule } from '../../../lib/scheduler/stored-schedule.dto';
import { ZonedCron } from '../../../lib/scheduler/zoned-cron';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { captureWarnings } from '../../support/collecting-logger';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';
import { TestRedisClient, openRedis } from '../../support/test-redis';

jest.setTimeout(60_000);

const at = Date.parse;
const job = { queue: 'reports', name: 'report', data: { kind: 'hourly' } };

/** An app of one tenant, acme, and one queue, its scheduler and store, and a Redis client. */
async function bootAcme(clock: ManualClock, options?: TenantSchedulerOptions) {
  const app = await bootSchedulerApp({
    prefix: uniquePrefix(),
    clock,
    directory: new InMemoryTenantDirectory([{ id: 'acme' }]),
    queues: ['reports'],
    scheduler: options,
  });
  const redis: TestRedisClient = openRedis();
  return { app, scheduler: app.get(TenantScheduler), store: app.get(ScheduleStore), redis };
}

/** Stored records this version cannot run: they must stay as they are, and block nothing. */
describe('TenantScheduler: stored records it cannot read', () => {
  let app: TestingModule;
  let scheduler: TenantScheduler;
  let store: ScheduleStore;
  let redis: TestRedisClient;
  let errors: string[];
  let spy: jest.SpyInstance;
  const clock = new ManualClock(at('2026-05-01T08:00:00Z'));

  const bad: Record<string, string> = {
    broken: '{"kind":"tenant","tenantId":"acme"',
    future: JSON.stringify({ kind: 'every', tenantId: 'acme', key: 'future', every: 60_000 }),
    nojob: JSON.stringify({
      kind: 'tenant',
      tenantId: 'acme',
      key: 'nojob',
      cron: '0 * * * *',
      timezone: 'UTC',
      enabled: true,
      missed: 'skip',
      maxCatchUp: 10,
    }),
  };
  const due = at('2026-05-01T08:30:00Z');

  beforeAll(async () => {
    // Fewer than the bad records: a batch of them must not hold up the good one.
    ({ app, scheduler, store, redis } = await bootAcme(clock, { enabled: false, batchSize: 2 }));
  });

  afterAll(async () => {
    await app.close();
    await redis.quit();
  });

  beforeEach(() => {
    errors = [];
    spy = jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((message: unknown) => void errors.push(String(message)));
  });
  afterEach(() => spy.mockRestore());

  async function writeBad(): Promise<void> {
    for (const [key, raw] of Object.entries(bad)) {
      const id = tenantScheduleId('acme', key);
      await redis.hset(store.keys.defs, id, raw);
      await redis.zadd(store.keys.due, due, id);
      await redis.sadd(store.keys.tenant('acme'), key);
    }
  }

  async function expectUntouched(): Promise<void> {
    for (const [key, raw] of Object.entries(bad)) {
      const id = tenantScheduleId('acme', key);
      expect(await redis.hget(store.keys.defs, id)).toBe(raw);
      expect(Number(await redis.zscore(store.keys.due, id))).toBe(due);
    }
  }

  it('runs the readable schedule, leaves the others due and untouched, and logs each once', async () => {
    await scheduler.upsert('acme', 'hourly', { cron: '0 * * * *', job });
    await writeBad();

    clock.set('2026-05-01T09:00:00.300Z');
    const first = await scheduler.tick();
    expect(first.jobIds).toEqual([
      tenantScheduleJobId('acme', 'hourly', at('2026-05-01T09:00:00Z')),
    ]);
    expect(first.due).toBe(4);
    await expectUntouched();
    expect(errors).toHaveLength(3);
    expect(errors.find((e) => e.includes('"t~acme~broken"'))).toMatch(
      /Stored schedule "t~acme~broken" cannot be read: it is not JSON \(.*\)\. It is left in Redis/,
    );
    expect(errors.find((e) => e.includes('"t~acme~future"'))).toMatch(
      /cannot be read: it has an unknown kind "every"/,
    );
    expect(errors.find((e) => e.includes('"t~acme~nojob"'))).toMatch(
      /cannot be read: it has a bad "job".*TenantScheduler\.upsert\(\)/,
    );

    clock.set('2026-05-01T10:00:00.300Z');
    const second = await scheduler.tick();
    expect(second.jobIds).toEqual([
      tenantScheduleJobId('acme', 'hourly', at('2026-05-01T10:00:00Z')),
    ]);
    await expectUntouched();
    expect(errors).toHaveLength(3);
  });

  it('lists the readable schedules, refuses the unreadable ones by key, and upsert repairs one', async () => {
    expect((await scheduler.list('acme')).map((s) => s.key)).toEqual(['hourly']);
    for (const key of Object.keys(bad)) {
      await expect(scheduler.next('acme', key)).rejects.toThrow(InvalidScheduleError);
      await expect(scheduler.pause('acme', key)).rejects.toThrow(
        new RegExp(`Stored schedule "t~acme~${key}" cannot be read`),
      );
    }
    await expectUntouched();

    const repaired = await scheduler.upsert('acme', 'broken', { cron: '30 * * * *', job });
    expect(repaired.nextRunAt?.toISOString()).toBe('2026-05-01T10:30:00.000Z');
    expect((await scheduler.list('acme')).map((s) => s.key)).toEqual(['broken', 'hourly']);
    clock.set('2026-05-01T10:30:00.300Z');
    expect((await scheduler.tick()).jobIds).toEqual([
      tenantScheduleJobId('acme', 'broken', at('2026-05-01T10:30:00Z')),
    ]);
    expect(await scheduler.remove('acme', 'future')).toBe(true);
    expect(await scheduler.remove('acme', 'nojob')).toBe(true);
    expect((await scheduler.list('acme')).map((s) => s.key)).toEqual(['broken', 'hourly']);
  });

  it('keeps a claimed occurrence whose record became unreadable in the outbox until it can run', async () => {
    const id = tenantScheduleId('acme', 'hourly');
    const occurrence = at('2026-05-01T11:00:00Z');
    const member = `${id}|${occurrence}`;
    const good = await redis.hget(store.keys.defs, id);
    // A claim left by a stopped instance, then the record is damaged.
    await redis.zadd(store.keys.outbox, occurrence, member);
    await redis.hset(store.keys.defs, id, '{"kind":"tenant"');
    clock.set('2026-05-01T11:00:00.300Z');
    const first = await scheduler.tick();
    expect(first.recovered).toBe(1);
    expect(first.jobIds).toEqual([]);
    expect(await redis.zscore(store.keys.outbox, member)).not.toBeNull();
    expect(errors.join('\n')).toMatch(/Stored schedule "t~acme~hourly" cannot be read/);

    // Repaired, the occurrence is sent once its lease (claimTimeout, 30 s) runs out.
    await redis.hset(store.keys.defs, id, good!);
    clock.set(occurrence + 31_000);
    const second = await scheduler.tick();
    expect(second.recovered).toBe(1);
    expect(second.jobIds).toContain(tenantScheduleJobId('acme', 'hourly', occurrence));
    expect(await redis.zscore(store.keys.outbox, member)).toBeNull();
  });
});

@Injectable()
class Nightly {
  @TenantCron('0 9 * * *', { name: 'records-nightly', missed: 'once' })
  async run() {}
}

describe('@TenantCron drivers at bootstrap', () => {
  const prefix = uniquePrefix();
  const id = cronScheduleId('records-nightly');
  const boot = (clock: ManualClock) =>
    bootSchedulerApp({
      prefix,
      clock,
      directory: new InMemoryTenantDirectory([{ id: 'acme' }]),
      providers: [Nightly],
    });

  it('writes an unreadable driver again, and keeps one that still matches', async () => {
    const redis = openRedis();
    const warnings = captureWarnings();
    try {
      const first = await boot(new ManualClock(at('2026-06-01T00:00:00Z')));
      const keys = first.get(ScheduleStore).keys;
      await first.close();
      await redis.hset(keys.defs, id, '{"kind":"cron","name":');
      await redis.zadd(keys.due, at('2026-05-01T09:00:00Z'), id);

      const second = await boot(new ManualClock(at('2026-06-01T00:00:00Z')));
      await second.close();
      expect(warnings.lines.join('\n')).toMatch(
        /@TenantCron "records-nightly": the stored driver is not JSON \(.*\); writing it again/,
      );
      expect(parseStoredSchedule(id, (await redis.hget(keys.defs, id))!)).toEqual({
        kind: 'cron',
        name: 'records-nightly',
        cron: '0 9 * * *',
        timezone: 'UTC',
        enabled: true,
        missed: 'once',
        maxCatchUp: 10,
      });
      expect(Number(await redis.zscore(keys.due, id))).toBe(at('2026-06-01T09:00:00Z'));

      // Unchanged, it keeps its next run, so the runs missed while no app ran are noticed.
      const third = await boot(new ManualClock(at('2026-06-02T12:00:00Z')));
      await third.close();
      expect(Number(await redis.zscore(keys.due, id))).toBe(at('2026-06-01T09:00:00Z'));
    } finally {
      warnings.restore();
      await redis.quit();
    }
  });
});

/**
 * A schedule saved by a version that drew `H` from the expression alone keeps that next run in
 * Redis: schedules.md says the upgrade keeps it and moves the runs after it to the new minute.
 */
describe("TenantScheduler: an 'H' schedule stored before H was drawn per schedule", () => {
  let app: TestingModule;
  let scheduler: TenantScheduler;
  let store: ScheduleStore;
  let redis: TestRedisClient;
  const clock = new ManualClock(at('2026-05-01T00:00:00Z'));

  beforeAll(async () => {
    ({ app, scheduler, store, redis } = await bootAcme(clock));
  });

  afterAll(async () => {
    await app.close();
    await redis.quit();
  });

  it('runs its stored next run once, on time, then at its own minute', async () => {
    // The next run the earlier version stored: `H` seeded by the expression alone.
    const old = ZonedCron.parse('H 3 * * *', 'UTC').nextAfter(clock.value)!;
    let earlier = 0;
    let later = 0;
    for (let i = 0; (earlier === 0 || later === 0) && i < 200; i++) {
      const key = `nightly-${i}`;
      clock.set('2026-05-01T00:00:00Z');
      const saved = await scheduler.upsert('acme', key, { cron: 'H 3 * * *', job });
      const own = saved.nextRunAt!.getTime();
      if (own === old) continue;
      // Written as the earlier version left it: the same record, its next run at the old minute.
      await redis.zadd(store.keys.due, old, tenantScheduleId('acme', key));
      clock.set(old + 500);
      // Before: no job at the old minute; when the new minute comes first in the day, none that
      // day at all (the next run moved to tomorrow's).
      expect((await scheduler.tick()).jobIds).toEqual([tenantScheduleJobId('acme', key, old)]);
      const [stored] = (await scheduler.list('acme')).filter((s) => s.key === key);
      const next = own < old ? own + 24 * 3_600_000 : own;
      expect(stored.nextRunAt?.getTime()).toBe(next);
      clock.set(next + 500);
      expect((await scheduler.tick()).jobIds).toEqual([tenantScheduleJobId('acme', key, next)]);
      await scheduler.remove('acme', key);
      if (own < old) earlier++;
      else later++;
    }
    // Both cases ran: the new minute before the old one in the day, and after it.
    expect([earlier > 0, later > 0]).toEqual([true, true]);
  });
});

describe("@TenantCron: an 'H' driver stored before H was drawn by its name", () => {
  const runs: string[] = [];
  const base = at('2026-05-01T00:00:00Z');
  const expression = 'H 3 * * *';
  // The next run the earlier version stored (`H` seeded by the expression alone), and a name
  // whose own `H` comes before it in the day: the day's run the upgrade lost.
  const old = ZonedCron.parse(expression, 'UTC').nextAfter(base)!;
  const ownOf = (name: string) =>
    ZonedCron.parse(expression, 'UTC', cronScheduleId(name)).nextAfter(base)!;
  let name = '';
  for (let i = 0; i < 500 && !name; i++) if (ownOf(`nightly-h-${i}`) < old) name = `nightly-h-${i}`;

  @Injectable()
  class NightlyH {
    @TenantCron(expression, { name })
    async run(run: TenantCronRun) {
      runs.push(`${run.tenantId} ${run.occurrence.toISOString()}`);
    }
  }

  it("runs its stored next run once, on time, then at its name's minute", async () => {
    expect(name).not.toBe('');
    const clock = new ManualClock(base);
    const app = await bootSchedulerApp({
      prefix: uniquePrefix(),
      clock,
      directory: new InMemoryTenantDirectory([{ id: 'acme' }]),
      providers: [NightlyH],
    });
    const redis = openRedis();
    try {
      const keys = app.get(ScheduleStore).keys;
      const id = cronScheduleId(name);
      // As the earlier version left it: its next run at the old minute.
      await redis.zadd(keys.due, old, id);
      clock.set(old + 500);
      await app.get(TenantScheduler).tick();
      // Before: nothing ran that day (the next run went to tomorrow's own minute).
      await waitFor(() => runs.length === 1, "the stored run's job");
      expect(runs).toEqual([`acme ${new Date(old).toISOString()}`]);
      expect(Number(await redis.zscore(keys.due, id))).toBe(ownOf(name) + 24 * 3_600_000);
    } finally {
      await app.close();
      await redis.quit();
    }
  });
});
