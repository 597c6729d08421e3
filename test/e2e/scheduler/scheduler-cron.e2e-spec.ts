import { Injectable } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Job, Queue } from 'bullmq';
import {
  InMemoryTenantDirectory,
  InvalidScheduleError,
  TenantContext,
  TenantCron,
  TenantCronRun,
  TenantQueueRegistry,
  TenantScheduler,
  tenantCronJobId,
} from '../../../lib';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { ScheduleStore, cronScheduleId } from '../../../lib/scheduler/schedule.store';
import { FAN_OUT_ATTEMPTS } from '../../../lib/scheduler/schedule-delivery';
import { openRedis } from '../../support/test-redis';
import { captureWarnings } from '../../support/collecting-logger';
import { uniquePrefix } from '../../support/redis-url';
import { sleep, waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const at = Date.parse;

interface Seen {
  cron: string;
  tenantId: string;
  contextTenant: string | undefined;
  occurrence: string;
  jobId: string;
}

const seen: Seen[] = [];

@Injectable()
class Digests {
  constructor(private readonly tenant: TenantContext) {}

  private note(run: TenantCronRun) {
    seen.push({
      cron: run.name,
      tenantId: run.tenantId,
      contextTenant: this.tenant.tenantId,
      occurrence: run.occurrence.toISOString(),
      jobId: run.jobId,
    });
  }

  @TenantCron('0 9 * * *', { name: 'utc-digest', jobOptions: { attempts: 1 } })
  async utcDigest(run: TenantCronRun) {
    await sleep(run.tenantId === 'slow' ? 300 : 1);
    this.note(run);
    if (run.tenantId === 'broken') throw new Error('broken tenant');
  }

  @TenantCron('0 9 * * *', { name: 'local-digest', timezone: 'tenant', queue: 'local-cron' })
  async localDigest(run: TenantCronRun) {
    this.note(run);
  }

  @TenantCron('0 * * * *', { name: 'hourly-once', timezone: 'Europe/Kyiv', missed: 'once' })
  async hourly(run: TenantCronRun) {
    this.note(run);
  }
}

describe('@TenantCron fan-out', () => {
  let app: TestingModule;
  let scheduler: TenantScheduler;
  let cronQueue: Queue;
  const clock = new ManualClock(at('2026-06-01T00:00:00Z'));
  const directory = new InMemoryTenantDirectory(
    [
      { id: 'kyiv', timezone: 'Europe/Kyiv' },
      { id: 'ny', timezone: 'America/New_York' },
      { id: 'plain' },
      { id: 'broken', timezone: 'UTC' },
      { id: 'slow', timezone: 'UTC' },
      { id: 'paused', timezone: 'UTC', status: 'suspended' },
    ],
    2,
  );

  beforeAll(async () => {
    app = await bootSchedulerApp({
      prefix: uniquePrefix(),
      clock,
      directory,
      providers: [Digests],
      // Bounds each directory read of a fan-out (a page of listActiveTenants).
      guards: { portTimeoutMs: 300 },
    });
    scheduler = app.get(TenantScheduler);
    cronQueue = app.get(TenantQueueRegistry).getQueue('tq-cron').bullQueue;
  });

  afterAll(async () => {
    await app.close();
  });

  const of = (cron: string) => seen.filter((s) => s.cron === cron);

  it('enqueues one job per active tenant, runs each in its tenant context, isolates failures', async () => {
    clock.set('2026-06-01T09:00:00.200Z');
    await scheduler.tick();
    const active = ['broken', 'kyiv', 'ny', 'plain', 'slow'];
    await waitFor(() => of('utc-digest').length === active.length, 'every tenant digest');
    const runs = of('utc-digest').sort((a, b) => a.tenantId.localeCompare(b.tenantId));
    expect(runs.map((r) => r.tenantId)).toEqual(active);
    for (const run of runs) {
      expect(run.contextTenant).toBe(run.tenantId);
      expect(run.occurrence).toBe('2026-06-01T09:00:00.000Z');
      expect(run.jobId).toBe(tenantCronJobId('utc-digest', run.tenantId, at(run.occurrence)));
    }
    expect(runs.find((r) => r.tenantId === 'plain')!.jobId).toBe(
      'utc-digest~plain~20260601T090000Z',
    );
    await waitFor(
      async () => (await cronQueue.getJobCounts('completed')).completed >= 4,
      'the healthy jobs to complete',
    );
    const broken = await cronQueue.getJob('utc-digest~broken~20260601T090000Z');
    await waitFor(async () => (await broken!.isFailed()) === true, 'the broken job to fail');
    expect((await cronQueue.getJob('utc-digest~slow~20260601T090000Z'))!.finishedOn).toBeDefined();
    // The suspended tenant got no job.
    expect(await cronQueue.getJob('utc-digest~paused~20260601T090000Z')).toBeUndefined();
    // A second tick at the same instant adds nothing.
    await scheduler.tick();
    await sleep(200);
    expect(of('utc-digest')).toHaveLength(active.length);
  });

  it("runs a timezone: 'tenant' cron at 09:00 in each tenant's own zone, following zone changes", async () => {
    seen.length = 0;
    const step = async (when: string) => {
      clock.set(when);
      await scheduler.tick();
    };
    await step('2026-06-02T06:00:00Z'); // 09:00 in Kyiv
    await waitFor(() => of('local-digest').length === 1, 'the Kyiv digest');
    expect(of('local-digest')[0]).toMatchObject({ tenantId: 'kyiv', contextTenant: 'kyiv' });

    // Kyiv's tenant moves to New York: its next run follows the directory at once.
    directory.upsert({ id: 'kyiv', timezone: 'America/New_York' });
    await step('2026-06-02T09:00:00Z'); // 09:00 UTC: plain, broken, slow (not paused)
    await waitFor(() => of('local-digest').length === 4, 'the UTC digests');
    await step('2026-06-02T13:00:00Z'); // 09:00 in New York
    await waitFor(() => of('local-digest').length === 6, 'the New York digests');
    await step('2026-06-03T06:00:00Z'); // 09:00 in Kyiv: nobody there now
    await sleep(300);
    expect(
      of('local-digest')
        .map((r) => `${r.tenantId}@${r.occurrence}`)
        .sort(),
    ).toEqual([
      'broken@2026-06-02T09:00:00.000Z',
      'kyiv@2026-06-02T06:00:00.000Z',
      'kyiv@2026-06-02T13:00:00.000Z',
      'ny@2026-06-02T13:00:00.000Z',
      'plain@2026-06-02T09:00:00.000Z',
      'slow@2026-06-02T09:00:00.000Z',
    ]);
    directory.upsert({ id: 'kyiv', timezone: 'Europe/Kyiv' });
  });

  it("applies the missed policy per tenant ('once': the latest missed occurrence only)", async () => {
    seen.length = 0;
    // Last tick 06:00 UTC, next one 15:20 UTC: the hourly runs at 07:00..15:00 were missed.
    clock.set('2026-06-03T15:20:00Z');
    await scheduler.tick();
    await waitFor(() => of('hourly-once').length === 5, 'one catch-up run per tenant');
    await sleep(200);
    const runs = of('hourly-once');
    expect(runs).toHaveLength(5);
    expect(new Set(runs.map((r) => r.occurrence))).toEqual(new Set(['2026-06-03T15:00:00.000Z']));
  });

  it('writes a driver again that Redis lost (restarted empty, flushed), within a minute, and runs it', async () => {
    seen.length = 0;
    const store = app.get(ScheduleStore);
    const redis = openRedis();
    const id = cronScheduleId('utc-digest');
    // As after an empty restart: the driver's record and its place in the due index are gone.
    await redis.hdel(store.keys.defs, id);
    await redis.zrem(store.keys.due, id);
    await redis.quit();
    clock.set('2026-06-03T15:30:00Z');
    await scheduler.tick();
    expect(await store.nextRun(id)).toBe(at('2026-06-04T09:00:00Z'));
    expect((await store.get([id]))[0]).toMatchObject({ kind: 'cron', name: 'utc-digest' });
    clock.set('2026-06-04T09:00:00.100Z');
    await scheduler.tick();
    await waitFor(() => of('utc-digest').length === 5, 'the digests after the driver came back');
    expect(new Set(of('utc-digest').map((r) => r.occurrence))).toEqual(
      new Set(['2026-06-04T09:00:00.000Z']),
    );
  });

  // A fan-out had 5 attempts (1+2+4+8 s): a directory down for 15 s at the occurrence lost it for
  // every tenant, silently (a schedules trial). It is retried for about 34 minutes now.
  it('retries a fan-out while the directory is down, and reaches every tenant once it is back', async () => {
    seen.length = 0;
    const list = directory.listActiveTenants.bind(directory);
    let down = true;
    directory.listActiveTenants = (cursor) =>
      down ? Promise.reject(new Error('directory database unavailable')) : list(cursor);
    const fanOuts = app.get(TenantQueueRegistry).getQueue(`${cronQueue.name}-fanout`).bullQueue;
    try {
      clock.set('2026-06-05T09:00:00.100Z');
      await scheduler.tick();
      let fanOut: Job | undefined;
      await waitFor(async () => {
        fanOut = (await fanOuts.getDelayed()).find((j) => j.data?.name === 'utc-digest');
        return !!fanOut;
      }, 'the fan-out waiting for its retry');
      expect(fanOut!.attemptsMade).toBe(1);
      expect(fanOut!.opts.attempts).toBe(FAN_OUT_ATTEMPTS);
      expect(FAN_OUT_ATTEMPTS).toBeGreaterThanOrEqual(12);
      expect(fanOut!.failedReason).toContain('directory database unavailable');
      down = false;
      // Its next attempt, now rather than in 2 s.
      await fanOut!.promote();
      await waitFor(() => of('utc-digest').length === 5, 'every digest once the directory is back');
      expect(new Set(of('utc-digest').map((r) => r.occurrence))).toEqual(
        new Set(['2026-06-05T09:00:00.000Z']),
      );
    } finally {
      directory.listActiveTenants = list;
    }
  });

  /** The utc-digest fan-out, once it waits for its retry after `attempts` failed attempts. */
  async function retrying(attempts: number): Promise<Job> {
    const fanOuts = app.get(TenantQueueRegistry).getQueue(`${cronQueue.name}-fanout`).bullQueue;
    let fanOut: Job | undefined;
    await waitFor(
      async () => {
        fanOut = (await fanOuts.getDelayed()).find(
          (j) => j.data?.name === 'utc-digest' && j.attemptsMade === attempts,
        );
        return !!fanOut;
      },
      `the fan-out to wait for its retry after ${attempts} failed attempt(s)`,
      10_000,
    );
    return fanOut!;
  }

  /** Every active tenant's utc-digest of `occurrence` ran, once, and has its one job. */
  async function reachedEveryTenantOnce(occurrence: string): Promise<void> {
    const active = ['broken', 'kyiv', 'ny', 'plain', 'slow'];
    const runs = () => of('utc-digest').filter((r) => r.occurrence === occurrence);
    await waitFor(() => runs().length >= active.length, 'every digest once the directory answers');
    await sleep(200);
    expect(
      runs()
        .map((r) => r.tenantId)
        .sort(),
    ).toEqual(active);
    for (const tenantId of active) {
      expect(
        await cronQueue.getJob(tenantCronJobId('utc-digest', tenantId, at(occurrence))),
      ).toBeDefined();
    }
  }

  /**
   * Runs `steps` while every page of the directory after the first fails as `failing()` does,
   * until `steps` calls `heal`; returns the warnings of the outage it logged.
   */
  async function pagesFailing(
    failing: () => Promise<never>,
    steps: (heal: () => void) => Promise<void>,
  ): Promise<string[]> {
    seen.length = 0;
    const list = directory.listActiveTenants.bind(directory);
    let down = true;
    directory.listActiveTenants = (cursor) => (down && cursor !== null ? failing() : list(cursor));
    const warnings = captureWarnings();
    try {
      await steps(() => (down = false));
    } finally {
      directory.listActiveTenants = list;
      warnings.restore();
    }
    return warnings.lines.filter((l) =>
      l.includes('@TenantCron "utc-digest": its fan-out could not list'),
    );
  }

  // A directory that took the call and never answered held the fan-out job (and one of its
  // worker's two slots) for good: BullMQ renewed its lock, so it was never retried.
  it('fails an attempt whose directory page never answers within guards.portTimeoutMs, warns once, and reaches every tenant once it answers', async () => {
    const warned = await pagesFailing(
      () => new Promise<never>(() => undefined),
      async (heal) => {
        clock.set('2026-06-06T09:00:00.100Z');
        await scheduler.tick();
        const first = await retrying(1);
        expect(first.failedReason).toBe(
          'TenantDirectory.listActiveTenants("kyiv") did not answer within 300 ms ' +
            "(guards.portTimeoutMs). Check the directory's backing service.",
        );
        await first.promote();
        const second = await retrying(2);
        heal();
        await second.promote();
        await reachedEveryTenantOnce('2026-06-06T09:00:00.000Z');
      },
    );
    // Two attempts timed out: one warning, naming the cron.
    expect(warned).toHaveLength(1);
  });

  it('retries a fan-out whose directory throws after its first page, adding no job twice', async () => {
    const warned = await pagesFailing(
      () => Promise.reject(new Error('directory replica lost')),
      async (heal) => {
        clock.set('2026-06-07T09:00:00.100Z');
        await scheduler.tick();
        const first = await retrying(1);
        expect(first.failedReason).toBe('directory replica lost');
        heal();
        await first.promote();
        await reachedEveryTenantOnce('2026-06-07T09:00:00.000Z');
      },
    );
    // The outage before was over (a fan-out read the directory through): warned again.
    expect(warned).toHaveLength(1);
  });
});

describe('@TenantCron validation at bootstrap', () => {
  const boot = async (provider: new (...args: never[]) => unknown, withDirectory = true) => {
    const app = bootSchedulerApp({
      prefix: uniquePrefix(),
      clock: new ManualClock(at('2026-06-01T00:00:00Z')),
      directory: withDirectory ? new InMemoryTenantDirectory([{ id: 'a' }]) : undefined,
      providers: [provider],
    });
    return app;
  };

  it('refuses a bad expression, a bad zone and a duplicate name with InvalidScheduleError', async () => {
    @Injectable()
    class BadExpression {
      @TenantCron('0 25 * * *', { name: 'bad' })
      run() {}
    }
    @Injectable()
    class StepTooLong {
      // cron-parser ran it hourly, not every 90 minutes.
      @TenantCron('*/90 * * * *', { name: 'every-90' })
      run() {}
    }
    @Injectable()
    class BadZone {
      @TenantCron('0 9 * * *', { name: 'zone', timezone: 'Europe/Atlantis' })
      run() {}
    }
    @Injectable()
    class Twice {
      @TenantCron('0 9 * * *', { name: 'same' })
      one() {}
      @TenantCron('0 10 * * *', { name: 'same' })
      two() {}
    }
    await expect(boot(BadExpression)).rejects.toThrow(InvalidScheduleError);
    await expect(boot(StepTooLong)).rejects.toThrow(
      /"\*\/90 \* \* \* \*": the minute step \/90 is longer than the 60 values of the field/,
    );
    await expect(boot(BadZone)).rejects.toThrow(/Unknown time zone "Europe\/Atlantis"/);
    await expect(boot(Twice)).rejects.toThrow(/Two @TenantCron methods are named "same"/);
  });

  it('refuses an option name it does not know, naming the one meant (timeZone, as @nestjs/schedule spells it)', async () => {
    // Options kept in a constant escape TypeScript's excess-property check: before, `timeZone`
    // was dropped and the cron ran in UTC, hours off for every tenant.
    const options = { name: 'digest', timeZone: 'America/New_York' };
    @Injectable()
    class Migrated {
      @TenantCron('0 9 * * *', options as never)
      run() {}
    }
    const refused = boot(Migrated);
    await expect(refused).rejects.toThrow(InvalidScheduleError);
    await expect(refused).rejects.toThrow(
      /Invalid schedule option "@TenantCron\.timeZone": is not a known option; did you mean "timezone"\?/,
    );
  });

  it("refuses job options every tenant's job would be refused with, naming the option", async () => {
    @Injectable()
    class BadPriority {
      @TenantCron('0 9 * * *', { name: 'prio', jobOptions: { priority: -1 } })
      run() {}
    }
    @Injectable()
    class Repeating {
      @TenantCron('0 9 * * *', { name: 'rep', jobOptions: { repeat: { every: 1_000 } } as never })
      run() {}
    }
    await expect(boot(BadPriority)).rejects.toThrow(
      /Invalid schedule option "@TenantCron\.jobOptions\.priority": must be an integer/,
    );
    await expect(boot(Repeating)).rejects.toThrow(InvalidScheduleError);
    @Injectable()
    class WithParent {
      @TenantCron('0 9 * * *', {
        name: 'child',
        jobOptions: { parent: { id: 'p1', queue: 'bull:tq-cron' } } as never,
      })
      run() {}
    }
    await expect(boot(WithParent)).rejects.toThrow(
      /"@TenantCron\.jobOptions\.parent": is one fixed job for every occurrence.*Drop parent/,
    );
  });
});
