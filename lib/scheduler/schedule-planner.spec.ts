import { Logger } from '@nestjs/common';
import { InMemoryTenantDirectory } from '../testing';
import { SchedulePlanner } from './schedule-planner';
import { StoredCronSchedule, StoredTenantSchedule } from './stored-schedule';
import { resolveTenantSchedulerOptions } from './tenant-scheduler.options';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const base = Date.parse('2026-06-10T00:00:00Z');

const options = resolveTenantSchedulerOptions({ scheduler: { lateAfter: MINUTE } } as never);
const directory = new InMemoryTenantDirectory([
  { id: 'kyiv', timezone: 'Europe/Kyiv' },
  { id: 'nowhere', timezone: 'Not/AZone' },
]);
const planner = new SchedulePlanner(options, directory);

const tenantSchedule = (over: Partial<StoredTenantSchedule> = {}): StoredTenantSchedule => ({
  kind: 'tenant',
  tenantId: 'acme',
  key: 'report',
  cron: '0 * * * *',
  timezone: 'UTC',
  enabled: true,
  missed: 'all',
  maxCatchUp: 10,
  job: { queue: 'reports', name: 'build' },
  ...over,
});

const cronSchedule = (over: Partial<StoredCronSchedule> = {}): StoredCronSchedule => ({
  kind: 'cron',
  name: 'nightly',
  cron: '0 * * * *',
  timezone: 'UTC',
  enabled: true,
  missed: 'all',
  maxCatchUp: 10,
  ...over,
});

describe('SchedulePlanner (the clock is the `now` each call is given)', () => {
  it('plans one member per on-time run of a tenant schedule, and its next run', async () => {
    const now = base + HOUR + 500;
    const planned = await planner.plan('t~acme~report', base + HOUR, tenantSchedule(), now);
    expect(planned.claim).toEqual({
      id: 't~acme~report',
      expected: base + HOUR,
      next: base + 2 * HOUR,
      members: [`t~acme~report|${base + HOUR}`],
    });
    expect(planned.missed).toBeUndefined();
  });

  it('after downtime follows the missed policy and reports the missed runs for the log', async () => {
    const now = base + 5 * HOUR + 10 * MINUTE;
    const skip = await planner.plan('s', base + HOUR, tenantSchedule({ missed: 'skip' }), now);
    expect(skip.claim.members).toEqual([]);
    expect(skip.claim.next).toBe(base + 6 * HOUR);
    expect(skip.missed).toMatchObject({ owner: 'tenant acme schedule "report"' });
    expect(skip.missed?.plan).toMatchObject({ missed: 5, caughtUp: 0 });
    const all = await planner.plan('s', base + HOUR, tenantSchedule({ maxCatchUp: 2 }), now);
    expect(all.claim.members).toEqual([`s|${base + 4 * HOUR}`, `s|${base + 5 * HOUR}`]);
  });

  it("reads a 'tenant' zone from the directory, and falls back to UTC for a bad or unknown one", async () => {
    // 03:00 in Kyiv (UTC+3 in June) is 00:00 UTC.
    const daily = (tenantId: string) =>
      tenantSchedule({ tenantId, timezone: 'tenant', cron: '0 3 * * *' });
    expect(await planner.nextRunOf(daily('kyiv'), base - 1)).toBe(base);
    expect(await planner.nextRunOf(daily('nowhere'), base - 1)).toBe(base + 3 * HOUR);
    expect(await planner.nextRunOf(daily('unknown'), base - 1)).toBe(base + 3 * HOUR);
  });

  it("warns of a tenant's unknown directory zone once per schedule, again when the zone changes", async () => {
    const zones = new InMemoryTenantDirectory([{ id: 'lost', timezone: 'Not/AZone' }]);
    const own = new SchedulePlanner(options, zones);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const daily = (key: string) =>
        tenantSchedule({ tenantId: 'lost', key, timezone: 'tenant', cron: '0 3 * * *' });
      const warned = () => warn.mock.calls.map(([message]) => String(message));
      for (let i = 0; i < 3; i++) {
        await own.plan('t~lost~a', base + 3 * HOUR, daily('a'), base + 3 * HOUR);
        await own.nextRunOf(daily('a'), base);
      }
      expect(warned()).toEqual([
        expect.stringContaining(
          'schedule "a": tenant lost has an unknown time zone "Not/AZone" in the TenantDirectory; ' +
            'using UTC. Give the tenant an IANA zone',
        ),
      ]);
      await own.nextRunOf(daily('b'), base); // another schedule of the tenant: its own warning
      zones.upsert({ id: 'lost', timezone: 'Mars/Olympus' });
      await own.nextRunOf(daily('a'), base);
      zones.upsert({ id: 'lost', timezone: 'Europe/Kyiv' });
      await own.nextRunOf(daily('a'), base);
      zones.upsert({ id: 'lost', timezone: 'Mars/Olympus' });
      await own.nextRunOf(daily('a'), base);
      zones.upsert({ id: 'lost', timezone: undefined }); // none: UTC, as documented, no warning
      await own.nextRunOf(daily('a'), base);
      expect(warned().map((m) => m.match(/schedule "(\w)".*zone "([^"]+)"/)!.slice(1))).toEqual([
        ['a', 'Not/AZone'],
        ['b', 'Not/AZone'],
        ['a', 'Mars/Olympus'],
        ['a', 'Mars/Olympus'],
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('takes no zone from a record that names another tenant: UTC, warned once a change', async () => {
    const records = new Map<string, object>([['stray', { id: 'kyiv', timezone: 'Europe/Kyiv' }]]);
    const astray = {
      getTenant: async (id: string) => records.get(id) ?? null,
      listActiveTenants: async () => ({ tenants: [], nextCursor: null }),
    };
    const own = new SchedulePlanner(options, astray as never);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const daily = tenantSchedule({ tenantId: 'stray', timezone: 'tenant', cron: '0 3 * * *' });
      for (let i = 0; i < 3; i++)
        expect(await own.nextRunOf(daily, base - 1)).toBe(base + 3 * HOUR);
      records.set('stray', { id: 'stray', timezone: 'Europe/Kyiv' }); // its own record: its zone
      expect(await own.nextRunOf(daily, base - 1)).toBe(base);
      records.set('stray', { id: 'kyiv', timezone: 'Europe/Kyiv' });
      expect(await own.nextRunOf(daily, base - 1)).toBe(base + 3 * HOUR);
      expect(warn.mock.calls.map(([message]) => String(message))).toEqual([
        expect.stringContaining(
          'schedule "report": TenantDirectory.getTenant("stray") returned the record of tenant ' +
            '"kyiv", which says nothing of "stray": its schedules in the tenant\'s zone run in UTC',
        ),
        expect.stringContaining('returned the record of tenant "kyiv"'),
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('plans a @TenantCron as one fan-out member for the range, logging missed runs only when none remain', async () => {
    const now = base + HOUR + 500;
    const planned = await planner.plan('c~nightly', base + HOUR, cronSchedule(), now);
    expect(planned.claim.members).toEqual([`c~nightly|${base + HOUR}-${now}`]);
    expect(planned.claim.next).toBe(base + 2 * HOUR);
    expect(planned.missed).toBeUndefined();
    const late = base + 3 * HOUR + 10 * MINUTE;
    const skipped = await planner.plan('c~n', base + HOUR, cronSchedule({ missed: 'skip' }), late);
    expect(skipped.claim.members).toEqual([]);
    expect(skipped.missed).toMatchObject({ owner: '@TenantCron "nightly"' });
  });

  it("hands a tenant-zone @TenantCron to its fan-out job, next at the earliest zone's run", async () => {
    const now = base + 30 * MINUTE;
    const schedule = cronSchedule({ timezone: 'tenant', cron: '0 3 * * *' });
    const planned = await planner.plan('c~z', base, schedule, now);
    expect(planned.claim.members).toEqual([`c~z|${base}-${now}`]);
    expect(planned.claim.next).toBe(await planner.nextRunOf(schedule, now));
    expect(planned.claim.next).toBeGreaterThan(now);
    expect(planned.claim.next).toBeLessThanOrEqual(now + HOUR);
  });

  it('takes a missing or disabled schedule out of the due index, and throws on a bad cron', async () => {
    for (const schedule of [undefined, tenantSchedule({ enabled: false })]) {
      expect((await planner.plan('x', base, schedule, base + HOUR)).claim).toEqual({
        id: 'x',
        expected: base,
        next: null,
        members: [],
      });
    }
    await expect(
      planner.plan('bad', base, tenantSchedule({ cron: 'not a cron' }), base + HOUR),
    ).rejects.toThrow();
  });

  it("spreads 'H' over its range by schedule, the same minute at every plan of one schedule", async () => {
    const after = Date.parse('2026-06-10T04:00:00Z');
    const minuteOf = (next: number | null) => new Date(next!).getUTCMinutes();
    const minutes = new Set<number>();
    for (let i = 0; i < 120; i++) {
      const schedule = tenantSchedule({ tenantId: `tenant-${i}`, key: 'sync', cron: 'H 3 * * *' });
      const next = await planner.nextRunOf(schedule, after);
      expect(new Date(next!).getUTCHours()).toBe(3);
      expect(await new SchedulePlanner(options, directory).nextRunOf(schedule, after)).toBe(next);
      minutes.add(minuteOf(next));
    }
    // One seed per expression put all 120 in one minute; 120 draws of 60 land in about 52.
    expect(minutes.size).toBeGreaterThan(30);
    // Keys of one tenant, and @TenantCron drivers by name, are spread too.
    const keys = new Set<number>();
    const drivers = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const key = tenantSchedule({ key: `k${i}`, cron: 'H 3 * * *' });
      keys.add(minuteOf(await planner.nextRunOf(key, after)));
      const driver = cronSchedule({ name: `cron-${i}`, cron: 'H 3 * * *' });
      drivers.add(minuteOf(await planner.nextRunOf(driver, after)));
    }
    expect(keys.size).toBeGreaterThan(5);
    expect(drivers.size).toBeGreaterThan(5);
    // An expression without H is what it says for every schedule.
    expect(
      await planner.nextRunOf(tenantSchedule({ tenantId: 'x', cron: '7 3 * * *' }), after),
    ).toBe(Date.parse('2026-06-10T03:07:00Z') + 24 * HOUR);
  });
});
