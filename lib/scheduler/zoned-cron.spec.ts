import { CronExpressionParser } from 'cron-parser';
import { DateTime, IANAZone } from 'luxon';
import { InvalidScheduleError } from './invalid-schedule.error';
import { ZonedCron, assertCronSteps } from './zoned-cron';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const at = (text: string) => Date.parse(text);

/** Local wall time of an instant through luxon's DateTime (independent of ZonedCron). */
function wallOf(instant: number, zone: string): number {
  const d = DateTime.fromMillis(instant, { zone });
  return Date.UTC(d.year, d.month - 1, d.day, d.hour, d.minute, d.second);
}

/**
 * The rule, by brute force over every minute: a run happens at instant t when some matching wall
 * time lies above the highest wall time seen so far and at or below t's own wall time. So a wall
 * time skipped by a gap runs when the gap ends, and a repeated wall time runs only the first time.
 */
function bruteForce(expression: string, zone: string, from: number, to: number): number[] {
  const matcher = CronExpressionParser.parse(expression, { tz: 'UTC' });
  const runs: number[] = [];
  let high = wallOf(from, zone);
  for (let t = from + MINUTE; t <= to; t += MINUTE) {
    const wall = wallOf(t, zone);
    if (wall <= high) continue;
    for (let w = high + MINUTE; w <= wall; w += MINUTE) {
      if (matcher.includesDate(new Date(w))) {
        runs.push(t);
        break;
      }
    }
    high = wall;
  }
  return runs;
}

function enumerate(cron: ZonedCron, from: number, to: number): number[] {
  const runs: number[] = [];
  let cursor = cron.nextAfter(from);
  while (cursor !== null && cursor <= to) {
    runs.push(cursor);
    cursor = cron.nextAfter(cursor);
  }
  return runs;
}

/** Every offset change of a zone in 2026, found by an hourly scan then narrowed to the minute. */
function transitions2026(zone: string): number[] {
  const z = IANAZone.create(zone);
  const found: number[] = [];
  for (let t = Date.UTC(2026, 0, 1); t < Date.UTC(2027, 0, 1); t += HOUR) {
    if (z.offset(t) !== z.offset(t + HOUR)) {
      let m = t;
      while (z.offset(m) === z.offset(t)) m += MINUTE;
      found.push(m);
    }
  }
  return found;
}

const ZONES = [
  'America/New_York',
  'Europe/Kyiv',
  'Australia/Lord_Howe',
  'America/Santiago',
  'Pacific/Chatham',
];
const DENSE = ['* * * * *', '*/15 * * * *', '0,30 * * * *'];
const SPARSE = [
  '30 2 * * *',
  '0 * * * *',
  '0 9 * * 1',
  '30 1 * * *',
  '0 0 * * *',
  '45 2 * * 0',
  '0 2 * * *',
  '15 3 * * *',
  '59 23 * * *',
];

describe('ZonedCron against a brute-force scan of every minute across real 2026 transitions', () => {
  for (const zone of ZONES) {
    const changes = transitions2026(zone);

    it(`${zone} has two transitions in 2026`, () => {
      expect(changes).toHaveLength(2);
    });

    for (const change of changes) {
      for (const expression of [...DENSE, ...SPARSE]) {
        it(`${zone} around ${iso(change)}: "${expression}"`, () => {
          const span = DENSE.includes(expression) ? 5 * HOUR : 2 * DAY;
          const from = change - span;
          const to = change + span;
          const cron = ZonedCron.parse(expression, zone);
          const actual = enumerate(cron, from, to).map(iso);
          expect(actual).toEqual(bruteForce(expression, zone, from, to).map(iso));
          expect(actual.length).toBeGreaterThan(0);
        });
      }
    }
  }
});

describe('ZonedCron DST rules, spelled out', () => {
  const runs = (expression: string, zone: string, from: string, count: number) =>
    ZonedCron.parse(expression, zone).take(at(from), count).map(iso);

  it('New York 02:30 on spring-forward day runs at 03:00 EDT, the end of the gap', () => {
    expect(runs('30 2 * * *', 'America/New_York', '2026-03-07T00:00:00Z', 3)).toEqual([
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:00:00.000Z', // 03:00 EDT (02:30 does not exist)
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  it('New York hourly on fall-back night runs 01:00 once (EDT), then 02:00 EST', () => {
    expect(runs('0 * * * *', 'America/New_York', '2026-11-01T03:30:00Z', 4)).toEqual([
      '2026-11-01T04:00:00.000Z', // 00:00 EDT
      '2026-11-01T05:00:00.000Z', // 01:00 EDT
      '2026-11-01T07:00:00.000Z', // 02:00 EST (01:00 EST is the repeat, skipped)
      '2026-11-01T08:00:00.000Z',
    ]);
  });

  it('New York 01:30 on fall-back day runs once, at its first occurrence', () => {
    expect(runs('30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', 2)).toEqual([
      '2026-11-01T05:30:00.000Z', // 01:30 EDT
      '2026-11-02T06:30:00.000Z', // 01:30 EST next day
    ]);
  });

  it('New York Mondays at 09:00 keep 09:00 local across both changes', () => {
    expect(runs('0 9 * * 1', 'America/New_York', '2026-03-01T00:00:00Z', 2)).toEqual([
      '2026-03-02T14:00:00.000Z',
      '2026-03-09T13:00:00.000Z',
    ]);
    expect(runs('0 9 * * 1', 'America/New_York', '2026-10-27T00:00:00Z', 2)).toEqual([
      '2026-11-02T14:00:00.000Z',
      '2026-11-09T14:00:00.000Z',
    ]);
  });

  it('Kyiv 03:30 on spring-forward day runs at 04:00 EEST; hourly on fall-back skips the repeat', () => {
    expect(runs('30 3 * * *', 'Europe/Kyiv', '2026-03-28T12:00:00Z', 2)).toEqual([
      '2026-03-29T01:00:00.000Z', // 04:00 EEST (03:30 does not exist)
      '2026-03-30T00:30:00.000Z',
    ]);
    expect(runs('0 * * * *', 'Europe/Kyiv', '2026-10-24T22:30:00Z', 4)).toEqual([
      '2026-10-24T23:00:00.000Z', // 02:00 EEST
      '2026-10-25T00:00:00.000Z', // 03:00 EEST
      '2026-10-25T02:00:00.000Z', // 04:00 EET (03:00 EET is the repeat)
      '2026-10-25T03:00:00.000Z',
    ]);
  });

  it('Lord Howe (30-minute shift): 02:15 in the gap runs at 02:30; 01:45 runs once', () => {
    expect(runs('15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T00:00:00Z', 2)).toEqual([
      '2026-10-03T15:30:00.000Z', // 02:30 +11:00 on 4 Oct (02:15 does not exist)
      '2026-10-04T15:15:00.000Z', // 02:15 +11:00 on 5 Oct
    ]);
    expect(runs('45 1 * * *', 'Australia/Lord_Howe', '2026-04-04T00:00:00Z', 2)).toEqual([
      '2026-04-04T14:45:00.000Z', // 01:45 +11:00 on 5 Apr, the first of the two
      '2026-04-05T15:15:00.000Z', // 01:45 +10:30 on 6 Apr
    ]);
  });

  it('is strictly increasing and never returns an instant at or before `after`', () => {
    const cron = ZonedCron.parse('* * * * *', 'America/New_York');
    const list = cron.take(at('2026-11-01T05:58:00Z'), 5).map(iso);
    expect(list).toEqual([
      '2026-11-01T05:59:00.000Z', // 01:59 EDT
      '2026-11-01T07:00:00.000Z', // 02:00 EST: the repeated 01:xx EST minutes are skipped
      '2026-11-01T07:01:00.000Z',
      '2026-11-01T07:02:00.000Z',
      '2026-11-01T07:03:00.000Z',
    ]);
    // Asked from inside the repeated hour (01:30 EST), the next run is 02:00 EST.
    expect(iso(cron.nextAfter(at('2026-11-01T06:30:00Z'))!)).toBe('2026-11-01T07:00:00.000Z');
  });
});

describe('ZonedCron.between', () => {
  const cron = ZonedCron.parse('0 * * * *', 'UTC');
  const from = at('2026-01-01T00:00:00Z');

  it('counts every run in a short range exactly', () => {
    const result = cron.between(from, from + 5 * HOUR, 10);
    expect(result).toEqual({
      runs: [0, 1, 2, 3, 4, 5].map((h) => from + h * HOUR),
      total: 6,
      exact: true,
      after: from + 6 * HOUR,
    });
  });

  it('returns only the latest `limit` runs of a long range, scanning a bounded window', () => {
    const result = cron.between(from, from + 365 * DAY, 2);
    expect(result.runs).toEqual([from + 365 * DAY - HOUR, from + 365 * DAY]);
    expect(result.exact).toBe(false);
    expect(result.total).toBeGreaterThanOrEqual(2);
    expect(result.total).toBeLessThan(100);
  });

  it('with limit 0 returns no runs but still says whether there were any', () => {
    const some = cron.between(from, from + 2 * HOUR, 0);
    expect(some.runs).toEqual([]);
    expect(some.total).toBeGreaterThan(0);
    expect(cron.between(from + 1, from + HOUR - 1, 0)).toEqual({
      runs: [],
      total: 0,
      exact: true,
      after: from + HOUR,
    });
  });
});

describe('ZonedCron.parse validation', () => {
  it.each([
    ['61 * * * *', 'UTC'],
    ['bogus', 'UTC'],
    ['', 'UTC'],
    ['* * * * * * *', 'UTC'],
    ['*/5 * * * * *', 'UTC'],
    ['0 0 31 2 *', 'UTC'],
    ['0 9 * * *', 'Mars/Olympus_Mons'],
    ['0 9 * * *', '+02:00'],
    ['0 9 * * *', 'tenant'],
  ])('refuses %j in %j with InvalidScheduleError', (expression, zone) => {
    expect(() => ZonedCron.parse(expression, zone)).toThrow(InvalidScheduleError);
  });

  it.each(['*', '9 *', '0 9 * *'])(
    'refuses %j (fewer than five fields), which cron-parser reads right-aligned',
    (expression) => {
      // '0 9 * *' ran every minute of hour 0 on the 9th; '9 *' every minute of September.
      expect(() => ZonedCron.parse(expression, 'UTC')).toThrow(
        /Invalid cron expression ".*": it has \d field\(s\)\. Use five fields/,
      );
    },
  );

  it.each([
    ['*/90 * * * *', 'minute step /90', 60],
    ['0 */36 * * *', 'hour step /36', 24],
    ['0 0 */45 * *', 'day-of-month step /45', 31],
    ['0 0 1 1-12/13 *', 'month step /13', 12],
    ['0 9 * * 1/8', 'day-of-week step /8', 7],
    ['0 H/90 * * * *', 'minute step /90', 60],
  ])(
    'refuses %j, a step longer than its field (cron-parser matched its first value only)',
    (expression, step, size) => {
      // '*/90 * * * *' ran hourly, not every 90 minutes.
      expect(() => assertCronSteps(expression)).toThrow(
        new RegExp(`the ${step} is longer than the ${size} values of the field`),
      );
    },
  );

  it('takes a step as long as its field: its first value only, as cron means it', () => {
    expect(
      ZonedCron.parse('*/60 * * * *', 'UTC').take(at('2026-01-01T00:00:00Z'), 2).map(iso),
    ).toEqual(['2026-01-01T01:00:00.000Z', '2026-01-01T02:00:00.000Z']);
    expect(() => assertCronSteps('0 */24 * * *')).not.toThrow();
    // Stored by an earlier version: it runs on as it did (its first value), never stuck.
    expect(ZonedCron.parse('*/90 * * * *', 'UTC').nextAfter(at('2026-01-01T00:30:00Z'))).toBe(
      at('2026-01-01T01:00:00Z'),
    );
  });

  it('gives "H" (a hashed value) the same value in every parse, so every instance agrees', () => {
    const runsOf = () =>
      ZonedCron.parse('H H * * *', 'Europe/Kyiv').take(at('2026-01-01T00:00:00Z'), 2);
    const first = runsOf();
    for (let parse = 0; parse < 10; parse++) expect(runsOf()).toEqual(first);
    expect(first[1] - first[0]).toBe(DAY);
  });

  it('accepts five fields, macros and a zero seconds field', () => {
    expect(ZonedCron.parse('@daily', 'Europe/Kyiv').expression).toBe('@daily');
    expect(ZonedCron.parse('0 30 9 * * 1-5', 'UTC').nextAfter(at('2026-01-05T00:00:00Z'))).toBe(
      at('2026-01-05T09:30:00Z'),
    );
  });
});
