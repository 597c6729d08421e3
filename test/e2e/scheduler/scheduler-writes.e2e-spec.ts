import { Injectable } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  InMemoryTenantDirectory,
  InvalidScheduleError,
  TenantCron,
  TenantScheduler,
  tenantScheduleJobId,
} from '../../../lib';
import type { TenantRecord } from '../../../lib';
import { ScheduleTicker } from '../../../lib/scheduler/schedule-ticker';
import { ScheduleStore } from '../../../lib/scheduler/schedule.store';
import { cronScheduleId } from '../../../lib/scheduler/stored-schedule';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { openRedis } from '../../support/test-redis';
import { uniquePrefix } from '../../support/redis-url';

jest.setTimeout(60_000);

const at = Date.parse;
const job = { queue: 'reports', name: 'report', data: {} };

/** Holds the next call it is armed for until released: a fixed interleaving, on a real Redis. */
class Gate {
  private armed = false;
  private hit: (() => void) | undefined;
  private open: (() => void) | undefined;

  /** The next `pass()` waits; resolves once a call is waiting there. */
  arm(): Promise<void> {
    this.armed = true;
    return new Promise((resolve) => (this.hit = resolve));
  }

  release(): void {
    this.open?.();
  }

  async pass(): Promise<void> {
    if (!this.armed) return;
    this.armed = false;
    const held = new Promise<void>((resolve) => (this.open = resolve));
    this.hit?.();
    await held;
  }
}

class GatedClock extends ManualClock {
  readonly gate = new Gate();

  override async now(): Promise<number> {
    const value = this.value;
    await this.gate.pass();
    return value;
  }
}

/** A directory whose `getTenant` (a 'tenant' zone's lookup, between a save's read and write) can be held. */
class GatedDirectory extends InMemoryTenantDirectory {
  readonly gate = new Gate();

  override async getTenant(tenantId: string): Promise<TenantRecord | null> {
    await this.gate.pass();
    return super.getTenant(tenantId);
  }
}

/**
 * Writes to a schedule (pause, resume, refreshTenant, upsert) race each other and the tick: each
 * reads the schedule, then writes it. Each case holds one write between its read and its write
 * while the other runs, and checks the outcome is one of the two orders.
 */
@Injectable()
class Nightly {
  @TenantCron('0 9 1 1 *', { name: 'nightly' }) // not due in these tests
  async run() {}
}

describe('TenantScheduler: writes that race other writes and the tick', () => {
  let app: TestingModule;
  let scheduler: TenantScheduler;
  const clock = new GatedClock(at('2026-04-01T08:00:00Z'));
  const directory = new GatedDirectory([{ id: 'acme', timezone: 'UTC' }]);

  beforeAll(async () => {
    app = await bootSchedulerApp({
      prefix: uniquePrefix(),
      clock,
      directory,
      queues: ['reports'],
      providers: [Nightly],
    });
    scheduler = app.get(TenantScheduler);
  });

  afterAll(async () => {
    await app.close();
  });

  beforeEach(async () => {
    clock.set('2026-04-01T08:00:00Z');
    for (const { key } of await scheduler.list('acme')) await scheduler.remove('acme', key);
  });

  it('a pause that lands while refreshTenant is between its read and its write stays paused', async () => {
    await scheduler.upsert('acme', 'hourly', { cron: '0 * * * *', timezone: 'tenant', job });
    const held = clock.gate.arm();
    const refreshing = scheduler.refreshTenant('acme');
    await held;
    await scheduler.pause('acme', 'hourly');
    clock.gate.release();
    await refreshing;
    // refreshTenant wrote back the schedule it had read (enabled): the pause was lost and it fired.
    const [stored] = await scheduler.list('acme');
    expect(stored).toMatchObject({ enabled: false, nextRunAt: null });
    clock.set('2026-04-01T09:00:00Z');
    expect((await scheduler.tick()).jobIds).toEqual([]);
  });

  it('a pause keeps the definition an upsert wrote between its read and its write', async () => {
    await scheduler.upsert('acme', 'report', { cron: '0 * * * *', job });
    const held = clock.gate.arm();
    const pausing = scheduler.pause('acme', 'report');
    await held;
    await scheduler.upsert('acme', 'report', { cron: '30 * * * *', missed: 'once', job });
    clock.gate.release();
    await pausing;
    // Either order leaves the new definition; the pause wrote the old one back.
    const [stored] = await scheduler.list('acme');
    expect(stored).toMatchObject({ cron: '30 * * * *', missed: 'once', enabled: false });
  });

  it('a pause or resume of a schedule removed between its read and its write brings nothing back', async () => {
    await scheduler.upsert('acme', 'gone', { cron: '0 * * * *', job });
    for (const write of ['pause', 'resume'] as const) {
      const held = clock.gate.arm();
      const writing = scheduler[write]('acme', 'gone');
      await held;
      await scheduler.remove('acme', 'gone');
      clock.gate.release();
      await expect(writing).rejects.toThrow(InvalidScheduleError);
      expect(await scheduler.list('acme')).toEqual([]);
      clock.set('2026-04-01T09:00:00Z');
      expect((await scheduler.tick()).jobIds).toEqual([]);
      clock.set('2026-04-01T08:00:00Z');
      await scheduler.upsert('acme', 'gone', { cron: '0 * * * *', job });
    }
  });

  it('a save whose next run the tick claimed before its write does not make that run due again', async () => {
    await scheduler.upsert('acme', 'local', { cron: '0 * * * *', timezone: 'tenant', job });
    const run = at('2026-04-01T09:00:00Z');
    clock.set(run - 100);
    // refreshTenant reads the schedule and now (08:59:59.900), then looks the zone up: held.
    const held = directory.gate.arm();
    const refreshing = scheduler.refreshTenant('acme');
    await held;
    clock.set(run + 100);
    expect((await scheduler.tick()).jobIds).toEqual([tenantScheduleJobId('acme', 'local', run)]);
    directory.gate.release();
    await refreshing;
    // It wrote 09:00 back as the next run: the next tick claimed 09:00 a second time.
    const again = await scheduler.tick();
    expect(again.claimed).toBe(0);
    const [stored] = await scheduler.list('acme');
    expect(stored.nextRunAt?.toISOString()).toBe('2026-04-01T10:00:00.000Z');
  });

  // A rolling deploy: a process of the new version stores its changed driver while an old one's
  // check (a tick, once a minute) rewrites the driver it found missing from Redis.
  it('the driver check writes a lost @TenantCron driver only if no process stored one meanwhile', async () => {
    const store = app.get(ScheduleStore);
    const id = cronScheduleId('nightly');
    const redis = openRedis();
    const newer = JSON.stringify({
      kind: 'cron',
      name: 'nightly',
      cron: '30 9 1 1 *',
      timezone: 'UTC',
      enabled: true,
      missed: 'skip',
      maxCatchUp: 10,
    });
    const planner = app.get(ScheduleTicker).planner;
    const nextRunOf = planner.nextRunOf.bind(planner);
    try {
      await redis.hdel(store.keys.defs, id);
      await redis.zrem(store.keys.due, id);
      // Between the check's read (missing) and its write, the new version's boot stores its own.
      let once = true;
      planner.nextRunOf = async (schedule, after) => {
        if (once && schedule.kind === 'cron') {
          once = false;
          await redis.hset(store.keys.defs, id, newer);
          await redis.zadd(store.keys.due, at('2027-01-01T09:30:00Z'), id);
        }
        return nextRunOf(schedule, after);
      };
      clock.set('2026-04-02T00:00:00Z');
      await scheduler.tick();
      // The check wrote its own ('0 9 1 1 *') over the newer version's driver.
      expect(await redis.hget(store.keys.defs, id)).toBe(newer);
      expect(await store.nextRun(id)).toBe(at('2027-01-01T09:30:00Z'));
    } finally {
      planner.nextRunOf = nextRunOf;
      await redis.quit();
    }
  });
});
