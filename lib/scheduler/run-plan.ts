import { MissedRunPolicy } from './tenant-schedule.interface';
import { ZonedCron } from './zoned-cron';

/** Which occurrences of a due schedule run now. */
export interface RunPlan {
  /** Instants to run, ascending. */
  runs: number[];
  /** Occurrences older than `lateAfter` (missed); a lower bound when `missedExact` is false. */
  missed: number;
  missedExact: boolean;
  /** Missed occurrences that run anyway (per the policy). */
  caughtUp: number;
  /** The first occurrence after `now`: the schedule's next run. */
  next: number | null;
}

export interface RunPlanInput {
  /** The stored next run that made the schedule due (epoch ms). */
  from: number;
  /** Now (epoch ms); every occurrence in [from, now] is settled by this plan. */
  now: number;
  policy: MissedRunPolicy;
  maxCatchUp: number;
  /** Occurrences more than this late are missed. */
  lateAfter: number;
}

/**
 * On-time occurrences never pile up beyond this (a guard against absurd `lateAfter`): the latest
 * run, the earlier ones count as missed (at least one more than the cap is computed, to know).
 */
const ON_TIME_CAP = 10_000;
/**
 * Missed occurrences are counted exactly up to at least this many (for the log; "10+" beyond).
 * Each one counted is computed: at 100, the first tick after a 5-week outage of 5,000
 * every-15-minute schedules took 100 s.
 */
const COUNT_AT_LEAST = 10;

/**
 * Occurrences in [from, now] no older than `lateAfter` always run. Older ones were missed:
 * `skip` runs none, `once` runs the latest, `all` runs the latest `maxCatchUp`.
 */
export function planRuns(cron: ZonedCron, input: RunPlanInput): RunPlan {
  const cutoff = input.now - input.lateAfter;
  const onTime = cron.between(
    Math.max(input.from, cutoff),
    input.now,
    ON_TIME_CAP,
    ON_TIME_CAP + 1,
  );
  const next = onTime.after;
  // On-time runs past the cap do not run: missed, a lower bound unless the window was whole.
  const dropped = onTime.total - onTime.runs.length;
  if (input.from >= cutoff) {
    const missedExact = dropped === 0 || onTime.exact;
    return { runs: onTime.runs, missed: dropped, missedExact, caughtUp: 0, next };
  }
  const keep = input.policy === 'skip' ? 0 : input.policy === 'once' ? 1 : input.maxCatchUp;
  if (dropped > 0) {
    // The missed ones are older still: none runs, and they are counted no more exactly.
    return { runs: onTime.runs, missed: dropped, missedExact: false, caughtUp: 0, next };
  }
  const missed = cron.between(input.from, cutoff - 1, keep, COUNT_AT_LEAST);
  return {
    runs: [...missed.runs, ...onTime.runs],
    missed: missed.total,
    missedExact: missed.exact,
    caughtUp: missed.runs.length,
    next,
  };
}
