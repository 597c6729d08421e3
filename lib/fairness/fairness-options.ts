import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { Messages } from '../tenant-queue.messages';
import { TenantRateLimit } from '../core/types/tenant-tier-options.interface';
import { checkRateLimit } from '../core/options/tiers.options';
import { unknownOptionWhy } from '../core/options/option-names';
import { TenantFairnessOptions, TenantLaneOptions } from './tenant-fairness-options.interface';

/** Fairness options of one queue with every default filled in. */
export interface ResolvedFairnessOptions {
  defaultWeight: number;
  maxConsecutive: number;
  defaultConcurrency: number;
  defaultMinConcurrency: number;
  maxBacklog: number;
  window: number;
  windowPerSlot: number;
  minWindow: number;
  leaseMs: number;
  tickMs: number;
  resendAfterMs: number;
  dispatchBatch: number;
  priorityByTurn: boolean;
  /** What a turn costs: one job, or the job's expected run time. */
  share: 'jobs' | 'time';
  slowLane: { failureThreshold: number; windowMs: number; share: number; recoverAt: number };
  /** Queue default rate limit, as given. */
  rateLimit?: TenantRateLimit;
  /** Lanes in priority order (empty: one unnamed lane). */
  lanes: { name: string; share: number; jobs: string[] }[];
  defaultLane: string;
  /** Where a job's fair key comes from (undefined: the queue uses none). */
  fairKey?: 'job' | 'actor';
}

const LANE_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/** GCRA parameters of a rate limit: emission interval T = per / max, tolerance (burst - 1) * T. */
export function gcraOf(limit: TenantRateLimit): [number, number] {
  const interval = limit.per / limit.max;
  return [interval, ((limit.burst ?? 1) - 1) * interval];
}

/** A rate limit as the gate stores it: "T:tol:max:per:burst", or "none" for an explicit no-limit. */
export function encodeRate(limit: TenantRateLimit | false): string {
  if (limit === false) return 'none';
  const [interval, tolerance] = gcraOf(limit);
  return `${interval}:${tolerance}:${limit.max}:${limit.per}:${limit.burst ?? 1}`;
}

/** The stored form back to the limit (`false` = explicitly none, `null` = nothing stored). */
export function decodeRate(value: unknown): TenantRateLimit | false | null {
  if (typeof value !== 'string' || value === '') return null;
  if (value === 'none') return false;
  const [, , max, per, burst] = value.split(':').map(Number);
  return max > 0 && per > 0 ? { max, per, burst } : null;
}

type Rule = [key: string, min: number, integer: boolean, max?: number];

const RULES: Rule[] = [
  ['defaultWeight', Number.MIN_VALUE, false, 1e6],
  ['maxConsecutive', 1, true],
  ['defaultConcurrency', 0, true],
  ['defaultMinConcurrency', 0, true],
  ['maxBacklog', 0, true],
  ['window', 1, true],
  ['windowPerSlot', 1, false, 1000],
  ['minWindow', 1, true],
  ['leaseMs', 1000, true],
  ['tickMs', 10, true],
  ['resendAfterMs', 1000, true],
  ['dispatchBatch', 1, true, 2000],
];

const SLOW_RULES: Rule[] = [
  ['failureThreshold', 0, true],
  ['windowMs', 100, true],
  ['share', Number.MIN_VALUE, false, 1],
  ['recoverAt', 0, true],
];

const OTHER_KEYS = ['enabled', 'slowLane', 'rateLimit', 'lanes', 'defaultLane', 'priorityByTurn'];

function checkNumbers(queue: string, path: string, input: object, rules: Rule[]): void {
  const known = new Set(rules.map((rule) => rule[0]));
  for (const key of Object.keys(input)) {
    if (path === '' && key === 'fairKey') continue;
    if (!known.has(key) && key !== 'share' && !OTHER_KEYS.includes(key)) {
      const names = [...known, ...(path === '' ? ['share', 'fairKey', ...OTHER_KEYS] : [])];
      throw invalid(queue, `${path}${key}`, unknownOptionWhy(key, names));
    }
  }
  for (const [key, min, integer, max] of rules) {
    const value = (input as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const ok =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      value >= min &&
      (max === undefined || value <= max) &&
      (!integer || Number.isInteger(value));
    if (!ok) {
      const range = `${integer ? 'an integer' : 'a number'} ${min === Number.MIN_VALUE ? '> 0' : `>= ${min}`}${max === undefined ? '' : ` and <= ${max}`}`;
      throw invalid(queue, `${path}${key}`, `must be ${range}`);
    }
  }
}

function invalid(queue: string, field: string, why: string): InvalidTenantQueueOptionsError {
  return new InvalidTenantQueueOptionsError(
    Messages.invalidOptions(`registerQueue(${queue}).fairness.${field}`, why),
  );
}

/** True when the queue's `fairness` option turns the gate on. */
export function isFairnessOn(input: TenantFairnessOptions | boolean | undefined): boolean {
  if (input === true) return true;
  return !!input && typeof input === 'object' && input.enabled !== false;
}

/** Validates a queue's fairness options (naming the bad field) and fills in defaults. */
export function resolveFairnessOptions(
  queue: string,
  input: TenantFairnessOptions | boolean,
): ResolvedFairnessOptions {
  const options: TenantFairnessOptions = input === true ? {} : input || {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalid(queue, '(root)', 'must be an object or true');
  }
  if (options.enabled !== undefined && typeof options.enabled !== 'boolean') {
    throw invalid(queue, 'enabled', 'must be a boolean');
  }
  if (options.priorityByTurn !== undefined && typeof options.priorityByTurn !== 'boolean') {
    throw invalid(queue, 'priorityByTurn', 'must be a boolean');
  }
  const share = options.share ?? 'jobs';
  if (share !== 'jobs' && share !== 'time') {
    throw invalid(queue, 'share', `must be 'jobs' or 'time' (got ${JSON.stringify(share)})`);
  }
  if (options.fairKey !== undefined && options.fairKey !== 'job' && options.fairKey !== 'actor') {
    throw invalid(queue, 'fairKey', "must be 'job' or 'actor'");
  }
  checkNumbers(queue, '', options, RULES);
  const { defaultConcurrency: cap = 0, defaultMinConcurrency: floor = 0 } = options;
  if (cap > 0 && floor > cap) {
    throw invalid(queue, 'defaultMinConcurrency', `must not be above defaultConcurrency (${cap})`);
  }
  const slow = options.slowLane === false ? { failureThreshold: 0 } : (options.slowLane ?? {});
  if (typeof slow !== 'object' || Array.isArray(slow)) {
    throw invalid(queue, 'slowLane', 'must be an object or false');
  }
  checkNumbers(queue, 'slowLane.', slow, SLOW_RULES);
  const failureThreshold = slow.failureThreshold ?? 20;
  const recoverAt = slow.recoverAt ?? Math.floor(failureThreshold / 2);
  if (failureThreshold > 0 && recoverAt >= failureThreshold) {
    throw invalid(queue, 'slowLane.recoverAt', 'must be below slowLane.failureThreshold');
  }
  const rateLimit = options.rateLimit;
  if (rateLimit !== undefined) wrap(queue, () => checkRateLimit('rateLimit', rateLimit));
  const lanes = resolveLanes(queue, options.lanes);
  const defaultLane = options.defaultLane ?? lanes[0]?.name ?? '';
  if (options.defaultLane !== undefined && !lanes.some((lane) => lane.name === defaultLane)) {
    throw invalid(queue, 'defaultLane', 'must name one of the declared lanes');
  }
  return {
    rateLimit,
    lanes,
    defaultLane,
    fairKey: options.fairKey,
    defaultWeight: options.defaultWeight ?? 1,
    // In time share a turn of short jobs takes many jobs: K caps the run-time ratio honoured.
    maxConsecutive: options.maxConsecutive ?? (share === 'time' ? 1000 : 5),
    defaultConcurrency: options.defaultConcurrency ?? 0,
    defaultMinConcurrency: options.defaultMinConcurrency ?? 0,
    maxBacklog: options.maxBacklog ?? 0,
    window: options.window ?? 0,
    windowPerSlot: options.windowPerSlot ?? 4,
    minWindow: options.minWindow ?? 16,
    leaseMs: options.leaseMs ?? 30_000,
    tickMs: options.tickMs ?? 1_000,
    resendAfterMs: options.resendAfterMs ?? 30_000,
    dispatchBatch: options.dispatchBatch ?? 200,
    priorityByTurn: options.priorityByTurn ?? false,
    share,
    slowLane: {
      failureThreshold,
      windowMs: slow.windowMs ?? 60_000,
      share: slow.share ?? 0.1,
      recoverAt,
    },
  };
}

/** Re-labels a tiers-style validation error with the queue's fairness path. */
function wrap(queue: string, check: () => void): void {
  try {
    check();
  } catch (error) {
    const field = /option "([^"]+)": (.*)\.$/.exec((error as Error).message);
    if (!field) throw error;
    throw invalid(queue, field[1], field[2]);
  }
}

function resolveLanes(
  queue: string,
  input: Record<string, TenantLaneOptions> | undefined,
): ResolvedFairnessOptions['lanes'] {
  if (input === undefined) return [];
  if (!input || typeof input !== 'object' || Array.isArray(input) || !Object.keys(input).length) {
    throw invalid(queue, 'lanes', 'must be { [lane]: { share, jobs? } } with at least one lane');
  }
  const lanes: ResolvedFairnessOptions['lanes'] = [];
  let total = 0;
  const named = new Set<string>();
  for (const [name, lane] of Object.entries(input)) {
    if (!LANE_NAME.test(name)) throw invalid(queue, `lanes.${name}`, 'is not a valid lane name');
    if (!lane || typeof lane !== 'object')
      throw invalid(queue, `lanes.${name}`, 'must be { share, jobs? }');
    for (const key of Object.keys(lane)) {
      if (key !== 'share' && key !== 'jobs')
        throw invalid(queue, `lanes.${name}.${key}`, unknownOptionWhy(key, ['share', 'jobs']));
    }
    if (typeof lane.share !== 'number' || !(lane.share >= 0 && lane.share <= 1)) {
      throw invalid(queue, `lanes.${name}.share`, 'must be a number from 0 to 1');
    }
    const jobs = lane.jobs ?? [];
    if (!Array.isArray(jobs) || jobs.some((job) => typeof job !== 'string')) {
      throw invalid(queue, `lanes.${name}.jobs`, 'must be a list of job names');
    }
    for (const job of jobs) {
      if (named.has(job)) throw invalid(queue, `lanes.${name}.jobs`, `names "${job}" twice`);
      named.add(job);
    }
    total += lane.share;
    lanes.push({ name, share: lane.share, jobs });
  }
  if (total > 1 + 1e-9) throw invalid(queue, 'lanes', 'shares must add up to at most 1');
  return lanes;
}

/** The `fairness` slice of `registerQueue`'s options. */
export interface FairnessQueueOptions {
  /**
   * Fair share across tenants for this queue (`true` for the defaults). Off when absent.
   * @default undefined
   */
  fairness?: TenantFairnessOptions | boolean;
  /**
   * A named budget shared with other fair queues: a tenant's cap (`maxConcurrency`,
   * `defaultConcurrency`, `TenantFairness.setConcurrency`) and rate limit count its jobs in every
   * queue of the budget together, so spreading work over queues does not multiply its share.
   * Needs `fairness`; the queues of one budget need the same `defaultConcurrency` and
   * `rateLimit`. Same rules as a queue name. The queue's keys (and its pools') move under the
   * budget's hash tag (`{<prefix>:~budget:<budget>}:<queue>`): drain a queue before adding it to
   * a budget, removing it, or moving it to another one.
   * @default undefined
   */
  budget?: string;
}

/** A queue's `fairness` option as registered (a pool shares its queue's). */
export function fairnessOf(
  definition: TenantQueueDefinition,
): TenantFairnessOptions | boolean | undefined {
  return (definition.registered as FairnessQueueOptions).fairness;
}
