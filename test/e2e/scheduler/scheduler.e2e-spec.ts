import { Logger } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Queue } from 'bullmq';
import {
  InMemoryTenantDirectory,
  InvalidJobOptionsError,
  InvalidPayloadError,
  InvalidScheduleError,
  InvalidTenantIdError,
  TenantQueueRegistry,
  TenantScheduler,
  UnknownTenantQueueError,
  tenantScheduleJobId,
} from '../../../lib';
import { ScheduleTicker } from '../../../lib/scheduler/schedule-ticker';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { captureWarnings } from '../../support/collecting-logger';
import { uniquePrefix } from '../../support/redis-url';
import { sleep, waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const HOUR = 3_600_000;
const at = Date.parse;
const iso = (ms: number) => new Date(ms).toISOString();
const job = { queue: 'reports', name: 'report', data: { kind: 'daily' } };

describe('TenantScheduler: schedules as tenant data', () => {
  let app: TestingModule;
  let scheduler: TenantScheduler;
  let bull: Queue;
  const clock = new ManualClock(at('2026-01-01T00:00:00Z'));
  const directory = new InMemoryTenantDirectory([
    { id: 'acme', timezone: 'Europe/Kyiv' },
    { id: 'globex', timezone: 'America/New_York' },
  ]);

  beforeAll(async () => {
    app = await bootSchedulerApp({
      prefix: uniquePrefix(),
      clock,
      directory,
      queues: ['reports'],
      guards: { portTimeoutMs: 300 },
    });
    scheduler = app.get(TenantScheduler);
    bull = app.get(TenantQueueRegistry).getQueue('reports').bullQueue;
  });

  afterAll(async () => {
    await app.close();
  });

  /** Moves the clock to each next run until `until`, ticking there; returns enqueued job ids. */
  async function runUntil(tenantId: string, key: string, until: number): Promise<string[]> {
    const ids: string[] = [];
    for (;;) {
      const [next] = await scheduler.next(tenantId, key, 1);
      if (!next || next.getTime() > until) return ids;
      clock.set(next.getTime());
      ids.push(...(await scheduler.tick()).jobIds);
    }
  }

  it('refuses bad cron expressions, zones, keys, tenants and queues with clear errors', async () => {
    const bad = [
      { cron: '61 * * * *', job },
      { cron: '*/5 * * * * *', job },
      { cron: '*/90 * * * *', job }, // ran hourly, not every 90 minutes
      { cron: '0 9 * * *', timezone: 'Mars/Olympus', job },
      { cron: '0 9 * * *', timezone: '+03:00', job },
      { cron: '0 9 * * *', missed: 'sometimes', job },
      { cron: '0 9 * * *', maxCatchUp: 0, job },
      { cron: '0 9 * * *', job: { ...job, opts: { jobId: 'x' } } },
    ];
    for (const input of bad) {
      await expect(scheduler.upsert('acme', 'bad', input as never)).rejects.toThrow(
        InvalidScheduleError,
      );
    }
    await expect(scheduler.upsert('acme', 'bad', { cron: 'nope', job })).rejects.toThrow(
      /Invalid cron expression "nope".*Use five fields/,
    );
    await expect(scheduler.upsert('acme', 'a:b', { cron: '0 9 * * *', job })).rejects.toThrow(
      InvalidScheduleError,
    );
    await expect(scheduler.upsert('ac me', 'ok', { cron: '0 9 * * *', job })).rejects.toThrow(
      InvalidTenantIdError,
    );
    await expect(
      scheduler.upsert('acme', 'ok', { cron: '0 9 * * *', job: { ...job, queue: 'nowhere' } }),
    ).rejects.toThrow(UnknownTenantQueueError);
    expect(await scheduler.list('acme')).toEqual([]);
  });

  it('refuses a job that each occurrence would fail to enqueue, storing nothing', async () => {
    const refused: [object, typeof InvalidJobOptionsError | typeof InvalidPayloadError][] = [
      [{ ...job, data: { _tenant: { tenantId: 'globex' } } }, InvalidPayloadError],
      [{ ...job, data: { n: BigInt(1) } }, InvalidPayloadError],
      [{ ...job, opts: { priority: -1 } }, InvalidJobOptionsError],
      [{ ...job, opts: { delay: 'soon' } }, InvalidJobOptionsError],
      [{ ...job, opts: { repeat: { every: 1_000 } } }, InvalidJobOptionsError],
      // One fixed parent for every occurrence: a missing one failed each run; stored before.
      [{ ...job, opts: { parent: { id: 'p1', queue: 'bull:reports' } } }, InvalidScheduleError],
    ];
    for (const [bad, error] of refused) {
      await expect(
        scheduler.upsert('acme', 'bad-job', { cron: '0 9 * * *', job: bad as never }),
      ).rejects.toThrow(error);
    }
    await expect(
      scheduler.upsert('acme', 'bad-job', {
        cron: '0 9 * * *',
        job: { ...job, opts: { delay: -5 } },
      }),
    ).rejects.toThrow(/option "delay" must be a number of ms >= 0.*Fix or drop the option/);
    await expect(
      scheduler.upsert('acme', 'bad-job', {
        cron: '0 9 * * *',
        job: { ...job, opts: { parent: { id: 'p1', queue: 'bull:reports' } } as never },
      }),
    ).rejects.toThrow(/"job\.opts\.parent": is one fixed job for every occurrence.*Drop parent/);
    expect(await scheduler.list('acme')).toEqual([]);
  });

  it('stores, lists, previews, pauses, resumes and removes a schedule', async () => {
    clock.set('2026-03-06T00:00:00Z');
    const saved = await scheduler.upsert('globex', 'nightly', {
      cron: '30 2 * * *',
      timezone: 'America/New_York',
      job,
    });
    expect(saved).toMatchObject({
      tenantId: 'globex',
      key: 'nightly',
      missed: 'skip',
      enabled: true,
    });
    expect(iso(saved.nextRunAt!.getTime())).toBe('2026-03-06T07:30:00.000Z');
    expect((await scheduler.next('globex', 'nightly', 4)).map((d) => d.toISOString())).toEqual([
      '2026-03-06T07:30:00.000Z',
      '2026-03-07T07:30:00.000Z',
      '2026-03-08T07:00:00.000Z', // 02:30 does not exist: 03:00 EDT
      '2026-03-09T06:30:00.000Z',
    ]);
    expect(await scheduler.next('globex', 'nightly', 0)).toEqual([]);
    expect(await scheduler.next('globex', 'nightly', 1.5)).toHaveLength(1);
    // A preview is bounded: Infinity looped for ever, a huge count built that many dates.
    expect(await scheduler.next('globex', 'nightly', 1000)).toHaveLength(1000);
    for (const count of [1001, 1e9, Infinity]) {
      await expect(scheduler.next('globex', 'nightly', count)).rejects.toThrow(
        new InvalidScheduleError(
          `TenantScheduler.next: count ${count} is above 1000, the most runs one preview lists. ` +
            'Ask for 1000 or fewer.',
        ),
      );
    }
    expect((await scheduler.list('globex')).map((s) => s.key)).toEqual(['nightly']);
    expect((await scheduler.pause('globex', 'nightly')).nextRunAt).toBeNull();
    clock.set('2026-03-06T07:30:00Z');
    expect((await scheduler.tick()).jobIds).toEqual([]);
    clock.set('2026-03-07T00:00:00Z');
    const resumed = await scheduler.resume('globex', 'nightly');
    expect(iso(resumed.nextRunAt!.getTime())).toBe('2026-03-07T07:30:00.000Z');
    expect(await scheduler.remove('globex', 'nightly')).toBe(true);
    expect(await scheduler.list('globex')).toEqual([]);
    expect(await scheduler.remove('globex', 'nightly')).toBe(false);
  });

  it('enqueues each occurrence once, with a deterministic id, in the tenant context', async () => {
    clock.set('2026-05-01T08:00:00Z');
    await scheduler.upsert('acme', 'hourly', { cron: '0 * * * *', job });
    clock.set('2026-05-01T09:00:00.300Z');
    const first = await scheduler.tick();
    const id = tenantScheduleJobId('acme', 'hourly', at('2026-05-01T09:00:00Z'));
    expect(id).toBe('sched~acme~hourly~20260501T090000Z');
    expect(first.jobIds).toEqual([id]);
    expect((await scheduler.tick()).jobIds).toEqual([]);
    const stored = await bull.getJob(id);
    expect(stored?.name).toBe('report');
    expect(stored?.data).toMatchObject({
      kind: 'daily',
      _tenant: { tenantId: 'acme', actorType: 'system', strategy: 'system' },
    });
    await scheduler.remove('acme', 'hourly');
  });

  describe.each([
    {
      zone: 'America/New_York',
      cron: '30 2 * * *',
      from: '2026-03-06T12:00:00Z',
      to: '2026-03-10T12:00:00Z',
      expected: [
        '2026-03-07T07:30:00.000Z',
        '2026-03-08T07:00:00.000Z', // gap: 03:00 EDT
        '2026-03-09T06:30:00.000Z',
        '2026-03-10T06:30:00.000Z',
      ],
    },
    {
      zone: 'America/New_York',
      cron: '30 2 * * *',
      from: '2026-10-30T12:00:00Z',
      to: '2026-11-03T12:00:00Z',
      expected: [
        '2026-10-31T06:30:00.000Z',
        '2026-11-01T07:30:00.000Z', // 02:30 EST (02:30 occurs once)
        '2026-11-02T07:30:00.000Z',
        '2026-11-03T07:30:00.000Z',
      ],
    },
    {
      zone: 'America/New_York',
      cron: '0 * * * *',
      from: '2026-11-01T03:30:00Z',
      to: '2026-11-01T08:30:00Z',
      expected: [
        '2026-11-01T04:00:00.000Z',
        '2026-11-01T05:00:00.000Z', // 01:00 EDT
        '2026-11-01T07:00:00.000Z', // 02:00 EST: 01:00 EST (the repeat) does not run
        '2026-11-01T08:00:00.000Z',
      ],
    },
    {
      zone: 'America/New_York',
      cron: '0 * * * *',
      from: '2026-03-08T05:30:00Z',
      to: '2026-03-08T08:30:00Z',
      expected: [
        '2026-03-08T06:00:00.000Z',
        '2026-03-08T07:00:00.000Z',
        '2026-03-08T08:00:00.000Z',
      ],
    },
    {
      zone: 'America/New_York',
      cron: '0 9 * * 1',
      from: '2026-03-01T00:00:00Z',
      to: '2026-03-17T00:00:00Z',
      expected: [
        '2026-03-02T14:00:00.000Z',
        '2026-03-09T13:00:00.000Z',
        '2026-03-16T13:00:00.000Z',
      ],
    },
    {
      zone: 'Europe/Kyiv',
      cron: '30 2 * * *',
      from: '2026-03-28T12:00:00Z',
      to: '2026-03-30T12:00:00Z',
      expected: ['2026-03-29T00:30:00.000Z', '2026-03-29T23:30:00.000Z'],
    },
    {
      zone: 'Europe/Kyiv',
      cron: '30 3 * * *',
      from: '2026-03-28T12:00:00Z',
      to: '2026-03-30T12:00:00Z',
      expected: ['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'], // gap: 04:00 EEST
    },
    {
      zone: 'Europe/Kyiv',
      cron: '0 * * * *',
      from: '2026-10-24T22:30:00Z',
      to: '2026-10-25T03:30:00Z',
      expected: [
        '2026-10-24T23:00:00.000Z',
        '2026-10-25T00:00:00.000Z', // 03:00 EEST
        '2026-10-25T02:00:00.000Z', // 04:00 EET: 03:00 EET (the repeat) does not run
        '2026-10-25T03:00:00.000Z',
      ],
    },
    {
      zone: 'Europe/Kyiv',
      cron: '0 9 * * 1',
      from: '2026-10-18T00:00:00Z',
      to: '2026-11-03T00:00:00Z',
      expected: [
        '2026-10-19T06:00:00.000Z',
        '2026-10-26T07:00:00.000Z',
        '2026-11-02T07:00:00.000Z',
      ],
    },
  ])('$zone "$cron" from $from', ({ zone, cron, from, to, expected }) => {
    it('runs exactly at the documented instants, once each', async () => {
      clock.set(from);
      const key = `dst-${Math.random().toString(36).slice(2, 8)}`;
      await scheduler.upsert('globex', key, { cron, timezone: zone, job });
      const ids = await runUntil('globex', key, at(to));
      expect(ids).toEqual(expected.map((when) => tenantScheduleJobId('globex', key, at(when))));
      await scheduler.remove('globex', key);
    });
  });

  describe('missed runs (the scheduler was down for 5 h 10 min)', () => {
    let warnings: ReturnType<typeof captureWarnings>;

    beforeEach(() => (warnings = captureWarnings()));
    afterEach(() => warnings.restore());

    const start = at('2026-06-10T00:30:00Z');
    const hours = (...h: number[]) => h.map((n) => at('2026-06-10T00:00:00Z') + n * HOUR);

    it.each([
      { missed: 'skip', maxCatchUp: undefined, runs: [] as number[] },
      { missed: 'once', maxCatchUp: undefined, runs: hours(5) },
      { missed: 'all', maxCatchUp: 3, runs: hours(3, 4, 5) },
      { missed: 'all', maxCatchUp: 10, runs: hours(1, 2, 3, 4, 5) },
    ])('$missed (maxCatchUp $maxCatchUp)', async ({ missed, maxCatchUp, runs }) => {
      const key = `missed-${missed}-${maxCatchUp ?? 0}`;
      clock.set(start);
      await scheduler.upsert('acme', key, {
        cron: '0 * * * *',
        missed: missed as 'skip',
        maxCatchUp,
        job,
      });
      clock.set(start + 5 * HOUR + 10 * 60_000);
      const result = await scheduler.tick();
      expect(result.jobIds).toEqual(runs.map((run) => tenantScheduleJobId('acme', key, run)));
      const [next] = await scheduler.next('acme', key, 1);
      expect(iso(next.getTime())).toBe(iso(hours(6)[0]));
      expect(warnings.lines.join('\n')).toContain(
        `tenant acme schedule "${key}": 5 missed run(s); policy "${missed}" runs ${runs.length}`,
      );
      // An on-time occurrence after the restart runs normally.
      clock.set(hours(6)[0] + 500);
      expect((await scheduler.tick()).jobIds).toEqual([
        tenantScheduleJobId('acme', key, hours(6)[0]),
      ]);
      await scheduler.remove('acme', key);
    });

    it('keeps them when the same definition is written again at restart; a change starts from now', async () => {
      const key = 'missed-rewritten';
      const input = { cron: '0 * * * *', missed: 'all' as const, maxCatchUp: 10, job };
      clock.set(start);
      await scheduler.upsert('acme', key, input);
      clock.set(start + 5 * HOUR + 10 * 60_000);
      // An app that writes its schedules from its own records at every boot.
      const again = await scheduler.upsert('acme', key, { ...input });
      expect(iso(again.nextRunAt!.getTime())).toBe(iso(hours(1)[0]));
      expect((await scheduler.tick()).jobIds).toEqual(
        hours(1, 2, 3, 4, 5).map((run) => tenantScheduleJobId('acme', key, run)),
      );
      const changed = await scheduler.upsert('acme', key, { ...input, cron: '30 * * * *' });
      expect(iso(changed.nextRunAt!.getTime())).toBe(iso(hours(6)[0] + 30 * 60_000));
      await scheduler.remove('acme', key);
    });

    it('refreshTenant at restart (the zone unchanged) keeps them, as does resume() of a schedule that runs; a due run stays due', async () => {
      const key = 'missed-refreshed';
      const input = {
        cron: '0 * * * *',
        timezone: 'tenant' as const,
        missed: 'all' as const,
        maxCatchUp: 10,
        job,
      };
      clock.set(start);
      await scheduler.upsert('acme', key, input);
      clock.set(start + 5 * HOUR + 10 * 60_000);
      // An app that refreshes its tenants' zones at every boot, and resumes what it knows runs.
      await scheduler.refreshTenant('acme');
      await scheduler.resume('acme', key);
      expect((await scheduler.tick()).jobIds).toEqual(
        hours(1, 2, 3, 4, 5).map((run) => tenantScheduleJobId('acme', key, run)),
      );
      // Due (the clock just past 06:00) when refreshed, before the tick claims it: it runs.
      clock.set(hours(6)[0] + 400);
      await scheduler.refreshTenant('acme');
      await scheduler.resume('acme', key);
      expect((await scheduler.tick()).jobIds).toEqual([
        tenantScheduleJobId('acme', key, hours(6)[0]),
      ]);
      // A paused schedule's resume still starts from now: what passed while paused does not run.
      await scheduler.pause('acme', key);
      clock.set(hours(9)[0] + 400);
      const resumed = await scheduler.resume('acme', key);
      expect(iso(resumed.nextRunAt!.getTime())).toBe(iso(hours(10)[0]));
      await scheduler.remove('acme', key);
    });
  });

  it("follows the tenant's own zone, and recomputes the next run when it changes", async () => {
    clock.set('2026-06-01T00:00:00Z');
    const saved = await scheduler.upsert('acme', 'local', {
      cron: '0 9 * * *',
      timezone: 'tenant',
      job,
    });
    expect(iso(saved.nextRunAt!.getTime())).toBe('2026-06-01T06:00:00.000Z'); // 09:00 Kyiv
    directory.upsert({ id: 'acme', timezone: 'America/New_York' });
    await scheduler.refreshTenant('acme');
    const [next] = await scheduler.next('acme', 'local', 1);
    expect(iso(next.getTime())).toBe('2026-06-01T13:00:00.000Z'); // 09:00 New York
    clock.set('2026-06-01T06:00:00Z');
    expect((await scheduler.tick()).jobIds).toEqual([]);
    clock.set('2026-06-01T13:00:00Z');
    expect((await scheduler.tick()).jobIds).toEqual([
      tenantScheduleJobId('acme', 'local', at('2026-06-01T13:00:00Z')),
    ]);
    directory.upsert({ id: 'acme', timezone: 'Europe/Kyiv' });
    await scheduler.remove('acme', 'local');
  });

  it("keeps a 'tenant' zone schedule due while the directory fails, and runs it once it answers", async () => {
    clock.set('2026-06-01T00:00:00Z');
    await scheduler.upsert('acme', 'outage', { cron: '0 9 * * *', timezone: 'tenant', job });
    const run = at('2026-06-01T06:00:00Z'); // 09:00 Kyiv
    const errors: string[] = [];
    const logged = jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((message: unknown) => void errors.push(String(message)));
    const down = jest
      .spyOn(directory, 'getTenant')
      .mockRejectedValue(new Error('tenants database unreachable'));
    try {
      clock.set(run + 500);
      expect((await scheduler.tick()).jobIds).toEqual([]);
      clock.set(run + 1_500);
      expect((await scheduler.tick()).jobIds).toEqual([]);
    } finally {
      down.mockRestore();
      logged.mockRestore();
    }
    // Still due at its run: nothing was lost.
    const [stored] = await scheduler
      .list('acme')
      .then((all) => all.filter((s) => s.key === 'outage'));
    expect(stored.nextRunAt?.toISOString()).toBe(iso(run));
    clock.set(run + 2_500);
    expect((await scheduler.tick()).jobIds).toEqual([tenantScheduleJobId('acme', 'outage', run)]);
    const [next] = await scheduler.next('acme', 'outage', 1);
    expect(iso(next.getTime())).toBe('2026-06-02T06:00:00.000Z');
    // The outage was logged once, with what to do.
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('Schedule "t~acme~outage" cannot be planned now');
    expect(errors[0]).toContain('tenants database unreachable');
    await scheduler.remove('acme', 'outage');
  });

  it("bounds a directory that never answers: the tick goes on, the 'tenant' zone schedule stays due", async () => {
    clock.set('2026-06-03T00:00:00Z');
    await scheduler.upsert('acme', 'silent', { cron: '0 9 * * *', timezone: 'tenant', job });
    await scheduler.upsert('globex', 'utc', { cron: '0 6 * * *', timezone: 'UTC', job });
    const run = at('2026-06-03T06:00:00Z'); // 09:00 Kyiv, 06:00 UTC
    const errors: string[] = [];
    const logged = jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((message: unknown) => void errors.push(String(message)));
    // A tenants database that takes the connection and never answers.
    const silent = jest.spyOn(directory, 'getTenant').mockReturnValue(new Promise(() => undefined));
    let ids: string[];
    const started = Date.now();
    try {
      clock.set(run + 500);
      ids = (await scheduler.tick()).jobIds;
    } finally {
      silent.mockRestore();
      logged.mockRestore();
    }
    // Within portTimeoutMs (300 ms), not for good: the UTC schedule ran, the silent one waits.
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(ids).toEqual([tenantScheduleJobId('globex', 'utc', run)]);
    expect(errors.join('\n')).toMatch(/t~acme~silent.*did not answer within 300 ms/s);
    clock.set(run + 1_500);
    expect((await scheduler.tick()).jobIds).toEqual([tenantScheduleJobId('acme', 'silent', run)]);
    await scheduler.remove('acme', 'silent');
    await scheduler.remove('globex', 'utc');
  });
});

describe('the automatic tick', () => {
  it('claims due occurrences on its own timer, and runs no tick after close', async () => {
    const clock = new ManualClock(at('2026-07-01T08:59:00Z'));
    const app = await bootSchedulerApp({
      prefix: uniquePrefix(),
      clock,
      queues: ['reports'],
      scheduler: { enabled: true, tickInterval: 20 },
    });
    let closed = false;
    try {
      const scheduler = app.get(TenantScheduler);
      const bull = app.get(TenantQueueRegistry).getQueue('reports').bullQueue;
      await scheduler.upsert('acme', 'auto', { cron: '0 9 * * *', job });
      clock.set('2026-07-01T09:00:00.100Z');
      const id = tenantScheduleJobId('acme', 'auto', at('2026-07-01T09:00:00Z'));
      await waitFor(async () => (await bull.getJob(id)) !== undefined, 'the automatic tick');
      const ticker = app.get(ScheduleTicker);
      await app.close();
      closed = true;
      // Closed: no tick runs any more (each tick that succeeds stamps lastTickAt).
      const last = ticker.lastTickAt;
      expect(last).toBeDefined();
      await sleep(10 * 20);
      expect(ticker.lastTickAt).toBe(last);
    } finally {
      if (!closed) await app.close();
    }
  });
});
