import { CronExpression, CronExpressionParser } from 'cron-parser';
import { IANAZone } from 'luxon';
import { InvalidScheduleError } from './invalid-schedule.error';
import { Messages } from '../tenant-queue.messages';

const MINUTE = 60_000;
const HOUR = 3_600_000;
/** A wall time is at most ~14 h away from its instant; ±36 h brackets every candidate. */
const BRACKET = 36 * 3_600_000;

/** The five cron fields, minute to day-of-week: name, and how many values each has. */
const FIELD_SIZES: [string, number][] = [
  ['minute', 60],
  ['hour', 24],
  ['day-of-month', 31],
  ['month', 12],
  ['day-of-week', 7],
];

/**
 * Refuses a field's step longer than the field (`*\/90` minutes) with `InvalidScheduleError`:
 * cron-parser takes it and matches the first value only, so "every 90 minutes" ran hourly and
 * "every 36 hours" daily. Checked where a schedule is declared (`upsert`, `@TenantCron`), not in
 * `ZonedCron.parse`: a schedule an earlier version stored runs on as it did.
 */
export function assertCronSteps(expression: string): void {
  const parts = typeof expression === 'string' ? expression.trim().split(/\s+/) : [];
  if (parts.length !== 5 && parts.length !== 6) return;
  const why = stepAboveRange(parts.slice(-5));
  if (why) throw new InvalidScheduleError(Messages.invalidCron(expression, why));
}

function stepAboveRange(fields: string[]): string | undefined {
  for (let i = 0; i < fields.length; i++) {
    const [name, size] = FIELD_SIZES[i];
    for (const match of fields[i].matchAll(/\/(\d+)/g)) {
      const step = Number(match[1]);
      if (step > size) {
        return (
          `the ${name} step /${step} is longer than the ${size} values of the field, so it ` +
          `would match only the first one (cron cannot say "every ${step} ${name}s")`
        );
      }
    }
  }
  return undefined;
}

/** Offset (minutes east of UTC) of a zone at an instant. */
type OffsetOf = (instant: number) => number;

/** True for "UTC" or an IANA zone the runtime knows. */
export function isValidTimezone(timezone: string): boolean {
  return timezone === 'UTC' || (typeof timezone === 'string' && IANAZone.isValidZone(timezone));
}

function offsetFunction(timezone: string): OffsetOf {
  if (timezone === 'UTC') return () => 0;
  const zone = IANAZone.create(timezone);
  return (instant) => zone.offset(instant);
}

/**
 * A cron expression evaluated on the wall clock of one time zone.
 *
 * The cron fields are matched against local wall time (cron-parser run in UTC over "wall
 * milliseconds"), and each matching wall time W runs at the first instant whose local time is
 * >= W. So a wall time skipped by a DST gap runs when the gap ends, and a wall time that occurs
 * twice runs once, at its first occurrence. Runs are strictly increasing.
 */
export class ZonedCron {
  private constructor(
    readonly expression: string,
    readonly timezone: string,
    private readonly matcher: CronExpression,
    private readonly offsetOf: OffsetOf,
  ) {}

  /**
   * Parses and validates; throws `InvalidScheduleError` with what to fix. `seed` names the
   * schedule (`hashSeedOf`): it draws `H` (cron-parser's hashed value), so schedules with one
   * expression spread over its range, and every parse in every process picks the same value.
   */
  static parse(expression: string, timezone: string, seed = ''): ZonedCron {
    if (typeof timezone !== 'string' || !isValidTimezone(timezone)) {
      throw new InvalidScheduleError(Messages.invalidTimezone(String(timezone)));
    }
    if (typeof expression !== 'string' || expression.trim() === '') {
      throw new InvalidScheduleError(Messages.invalidCron(String(expression), 'it is empty'));
    }
    // cron-parser reads fewer fields right-aligned, never what was meant: "0 9 * *" ran every
    // minute of hour 0 on the 9th, "*" every minute. A macro ("@daily") is one field.
    const fields = expression.trim().split(/\s+/).length;
    if (fields < 5 && !expression.trim().startsWith('@')) {
      throw new InvalidScheduleError(Messages.invalidCron(expression, `it has ${fields} field(s)`));
    }
    let matcher: CronExpression;
    try {
      // Seeded, never random: unseeded, each instance planned its own `H` and alternating
      // ticks moved the next run without ever running it. Seeded by the expression alone,
      // every tenant's 'H 3 * * *' ran in the same minute, the herd `H` is there to spread.
      matcher = CronExpressionParser.parse(expression.trim(), {
        tz: 'UTC',
        strict: false,
        hashSeed: seed === '' ? expression.trim() : `${seed}\n${expression.trim()}`,
      });
    } catch (error) {
      throw new InvalidScheduleError(Messages.invalidCron(expression, (error as Error).message));
    }
    const seconds = matcher.fields.second.values;
    if (seconds.length !== 1 || seconds[0] !== 0) {
      throw new InvalidScheduleError(
        Messages.invalidCron(expression, 'a seconds field is not supported'),
      );
    }
    const cron = new ZonedCron(expression.trim(), timezone, matcher, offsetFunction(timezone));
    if (cron.nextAfter(Date.UTC(2000, 0, 1)) === null) {
      throw new InvalidScheduleError(Messages.invalidCron(expression, 'it never matches'));
    }
    return cron;
  }

  /** The local wall time of an instant, as milliseconds of a UTC date with the same fields. */
  wallTimeOf(instant: number): number {
    return instant + this.offsetOf(instant) * MINUTE;
  }

  /** The first run strictly after `after` (epoch ms), or null when the expression has no more. */
  nextAfter(after: number): number | null {
    let wall = this.nextWallAfter(this.wallTimeOf(after));
    while (wall !== null) {
      const instant = this.resolve(wall);
      // Wall times of a repeated hour already passed at their first occurrence.
      if (instant > after) return instant;
      wall = this.nextWallAfter(wall);
    }
    return null;
  }

  /** The first matching wall time strictly after `wall` (both as UTC-field milliseconds). */
  nextWallAfter(wall: number): number | null {
    this.matcher.reset(new Date(wall));
    try {
      return this.matcher.next().getTime();
    } catch {
      return null;
    }
  }

  /** The same expression in another zone, sharing the parsed matcher. */
  inZone(timezone: string): ZonedCron {
    if (!isValidTimezone(timezone)) {
      throw new InvalidScheduleError(Messages.invalidTimezone(String(timezone)));
    }
    return new ZonedCron(this.expression, timezone, this.matcher, offsetFunction(timezone));
  }

  /** The next `count` runs strictly after `after`. */
  take(after: number, count: number): number[] {
    const runs: number[] = [];
    let cursor: number | null = after;
    while (runs.length < count && (cursor = this.nextAfter(cursor)) !== null) runs.push(cursor);
    return runs;
  }

  /**
   * Runs in [from, to]: the latest `limit` of them, and how many there are. Only a window ending
   * at `to` holding at least `countAtLeast` (default `limit`) runs is scanned; when it does not
   * reach `from`, `exact` is false and `total` is a lower bound. Scans at most ~8x that many.
   * `after` is the first run after `to`.
   */
  between(
    from: number,
    to: number,
    limit: number,
    countAtLeast = limit,
  ): { runs: number[]; total: number; exact: boolean; after: number | null } {
    const enough = Math.max(limit, countAtLeast, 1);
    let span = to - from < HOUR ? HOUR : this.spanHolding(to, enough);
    for (;;) {
      const start = Math.max(from - 1, to - span);
      const found: number[] = [];
      let cursor = this.nextAfter(start);
      while (cursor !== null && cursor <= to) {
        found.push(cursor);
        cursor = this.nextAfter(cursor);
      }
      const exact = start === from - 1;
      if (exact || found.length >= enough) {
        const runs = limit > 0 ? found.slice(-limit) : [];
        return { runs, total: found.length, exact, after: cursor };
      }
      span *= 8;
    }
  }

  /**
   * A window ending at `to` that likely holds `count` runs: from the gap between two runs in the
   * hour before `to` (a dense cron's hour holds 60 runs, all computed, when 10 were wanted), else
   * an hour. `between` widens a window that holds too few.
   */
  private spanHolding(to: number, count: number): number {
    const first = this.nextAfter(to - HOUR);
    if (first === null || first >= to) return HOUR;
    const second = this.nextAfter(first);
    return second === null ? HOUR : Math.max(MINUTE, (second - first) * (count + 1));
  }

  /** The first instant whose local wall time is >= `wall`. */
  resolve(wall: number): number {
    const before = this.offsetOf(wall - BRACKET);
    const after = this.offsetOf(wall + BRACKET);
    if (before === after && this.offsetOf(wall - before * MINUTE) === before) {
      return wall - before * MINUTE;
    }
    const offsets = new Set([before, this.offsetOf(wall), after]);
    for (const offset of [...offsets]) offsets.add(this.offsetOf(wall - offset * MINUTE));
    let best = Infinity;
    for (const offset of offsets) {
      const instant = wall - offset * MINUTE;
      if (this.offsetOf(instant) === offset && instant < best) best = instant;
    }
    if (best !== Infinity) return best;
    return this.gapEnd(wall, offsets);
  }

  /** `wall` falls in a DST gap: find, to the second, the instant the gap ends. */
  private gapEnd(wall: number, offsets: Set<number>): number {
    const candidates = [...offsets].map((offset) => wall - offset * MINUTE);
    let lo = Math.floor(Math.min(...candidates) / 1000);
    let hi = Math.ceil(Math.max(...candidates) / 1000);
    // Invariant: local(lo) < wall <= local(hi).
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.wallTimeOf(mid * 1000) >= wall) hi = mid;
      else lo = mid;
    }
    return hi * 1000;
  }
}
