import { planRuns } from './run-plan';
import { ZonedCron } from './zoned-cron';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const base = Date.parse('2026-06-10T00:00:00Z');
const hourly = ZonedCron.parse('0 * * * *', 'UTC');
const plan = (from: number, now: number, policy: 'skip' | 'once' | 'all', maxCatchUp = 10) =>
  planRuns(hourly, { from, now, policy, maxCatchUp, lateAfter: MINUTE });

describe('planRuns', () => {
  it('runs an on-time occurrence whatever the policy, and gives the next run', () => {
    for (const policy of ['skip', 'once', 'all'] as const) {
      expect(plan(base + HOUR, base + HOUR + 500, policy)).toEqual({
        runs: [base + HOUR],
        missed: 0,
        missedExact: true,
        caughtUp: 0,
        next: base + 2 * HOUR,
      });
    }
  });

  it('after downtime: skip runs none, once the latest, all the latest maxCatchUp', () => {
    const now = base + 5 * HOUR + 10 * MINUTE;
    expect(plan(base + HOUR, now, 'skip')).toMatchObject({ runs: [], missed: 5, caughtUp: 0 });
    expect(plan(base + HOUR, now, 'once')).toMatchObject({ runs: [base + 5 * HOUR], missed: 5 });
    expect(plan(base + HOUR, now, 'all', 2).runs).toEqual([base + 4 * HOUR, base + 5 * HOUR]);
    expect(plan(base + HOUR, now, 'all').runs).toHaveLength(5);
    expect(plan(base + HOUR, now, 'all').next).toBe(base + 6 * HOUR);
  });

  it('runs at most 10,000 on-time occurrences, the latest, and counts the rest as missed', () => {
    // An every-minute cron with a lateAfter of 30 days, due for 12 days: 17,280 runs on time.
    const minutely = ZonedCron.parse('* * * * *', 'UTC');
    const now = base + 12 * 24 * HOUR;
    for (const from of [base + MINUTE, base - 40 * 24 * HOUR]) {
      const result = planRuns(minutely, {
        from,
        now,
        policy: 'all',
        maxCatchUp: 10,
        lateAfter: 30 * 24 * HOUR,
      });
      expect(result.runs).toHaveLength(10_000);
      expect(result.runs.at(-1)).toBe(now);
      expect(result.runs[0]).toBe(now - 9_999 * MINUTE);
      expect(result.missed).toBeGreaterThan(0); // at least one: the count is not exact
      expect(result.missedExact).toBe(false);
      expect(result.caughtUp).toBe(0);
      expect(result.next).toBe(now + MINUTE);
    }
  });

  it('keeps the on-time occurrence next to the missed ones', () => {
    const now = base + 3 * HOUR + 30_000; // 03:00 is 30 s late: on time
    expect(plan(base + HOUR, now, 'once')).toMatchObject({
      runs: [base + 2 * HOUR, base + 3 * HOUR],
      missed: 2,
      caughtUp: 1,
    });
  });

  it('plans a long outage of a dense cron from a few runs, whatever the policy', () => {
    // 5 weeks of "*/15" missed: counting ~300 of them to log "256+" took ~20 ms a schedule, and
    // the first tick after the outage of 5,000 such schedules ran 100 s (later runs went late).
    const quarterly = ZonedCron.parse('*/15 * * * *', 'America/New_York');
    const nextAfter = jest.spyOn(quarterly, 'nextAfter');
    for (const policy of ['skip', 'once', 'all'] as const) {
      nextAfter.mockClear();
      const result = planRuns(quarterly, {
        from: Date.parse('2026-10-31T23:30:00Z'),
        now: Date.parse('2026-12-06T14:35:47Z'),
        policy,
        maxCatchUp: 3,
        lateAfter: MINUTE,
      });
      expect(result.caughtUp).toBe({ skip: 0, once: 1, all: 3 }[policy]);
      if (policy !== 'skip') expect(result.runs.at(-1)).toBe(Date.parse('2026-12-06T14:30:00Z'));
      expect(result.next).toBe(Date.parse('2026-12-06T14:45:00Z'));
      expect(result.missedExact).toBe(false);
      expect(nextAfter.mock.calls.length).toBeLessThanOrEqual(40);
    }
  });

  it('stays bounded after a very long outage (a year of minutely runs)', () => {
    const minutely = ZonedCron.parse('* * * * *', 'UTC');
    const result = planRuns(minutely, {
      from: base,
      now: base + 365 * 24 * HOUR + 30_000,
      policy: 'all',
      maxCatchUp: 3,
      lateAfter: MINUTE,
    });
    expect(result.runs).toHaveLength(4); // 3 caught up + the on-time one
    expect(result.missedExact).toBe(false);
    expect(result.missed).toBeGreaterThanOrEqual(10);
  });
});
