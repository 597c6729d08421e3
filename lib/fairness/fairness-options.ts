import { CoreQueueOptions, TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { Messages } from '../tenant-queue.messages';
import { TenantRateLimit } from '../core/types/tenant-tier-options.interface';
import { TenantFairnessOptions } from './tenant-fairness-options.interface';
import { FAIR_MODES, NumberRule, Refuse } from './modes';
import { checkOptions } from './fairness-option-checks';

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
  /** `priorityByTurn: true` as given: the gate's admissions too carry their turn, on any queue. */
  priorityByTurn: boolean;
  /**
   * Turns taken at add() where the queue allows it (`FairQueueConfig.turnsAtAdd`): unless
   * `priorityByTurn: false`.
   */
  turnsAtAdd: boolean;
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

/** The core's numeric options (each mode adds its own, see `FairMode.rules`). */
const RULES: NumberRule[] = [
  ['defaultWeight', Number.MIN_VALUE, false, 1e6],
  ['maxConsecutive', 1, true],
  ['defaultConcurrency', 0, true],
  ['maxBacklog', 0, true],
  ['window', 1, true],
  ['windowPerSlot', 1, false, 1000],
  ['minWindow', 1, true],
  ['leaseMs', 1000, true],
  ['tickMs', 10, true],
  ['resendAfterMs', 1000, true],
  ['dispatchBatch', 1, true, 2000],
];

/**
 * The order a refusal lists the option names in (as it always did); a mode's names not listed
 * here follow them.
 */
const NAME_ORDER = [
  'defaultWeight',
  'maxConsecutive',
  'defaultConcurrency',
  'defaultMinConcurrency',
  'maxBacklog',
  'window',
  'windowPerSlot',
  'minWindow',
  'leaseMs',
  'tickMs',
  'resendAfterMs',
  'dispatchBatch',
  'share',
  'fairKey',
  'enabled',
  'slowLane',
  'rateLimit',
  'lanes',
  'defaultLane',
  'priorityByTurn',
];
const KNOWN = [
  ...RULES.map((rule) => rule[0]),
  'enabled',
  'priorityByTurn',
  ...FAIR_MODES.flatMap((mode) => mode.keys),
];
const NAMES = [
  ...NAME_ORDER.filter((name) => KNOWN.includes(name)),
  ...KNOWN.filter((name) => !NAME_ORDER.includes(name)),
];
const ALL_RULES = [...RULES, ...FAIR_MODES.flatMap((mode) => mode.rules ?? [])];

function refuseFor(queue: string): Refuse {
  return (field, why) =>
    new InvalidTenantQueueOptionsError(
      Messages.invalidOptions(`registerQueue(${queue}).fairness.${field}`, why),
    );
}

/** True when the queue's `fairness` option turns the gate on. */
export function isFairnessOn(input: TenantFairnessOptions | boolean | undefined): boolean {
  if (input === true) return true;
  return !!input && typeof input === 'object' && input.enabled !== false;
}

/**
 * Validates a queue's fairness options (naming the bad field) and fills in defaults: the core's
 * own, then each mode's (`FAIR_MODES`).
 */
export function resolveFairnessOptions(
  queue: string,
  input: TenantFairnessOptions | boolean,
): ResolvedFairnessOptions {
  const refuse = refuseFor(queue);
  const options: TenantFairnessOptions = input === true ? {} : input || {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw refuse('(root)', 'must be an object or true');
  }
  if (options.enabled !== undefined && typeof options.enabled !== 'boolean') {
    throw refuse('enabled', 'must be a boolean');
  }
  if (options.priorityByTurn !== undefined && typeof options.priorityByTurn !== 'boolean') {
    throw refuse('priorityByTurn', 'must be a boolean');
  }
  checkOptions(options, '', NAMES, ALL_RULES, refuse);
  const resolved: ResolvedFairnessOptions = {
    rateLimit: undefined,
    lanes: [],
    defaultLane: '',
    fairKey: undefined,
    defaultWeight: options.defaultWeight ?? 1,
    maxConsecutive: options.maxConsecutive ?? 5,
    defaultConcurrency: options.defaultConcurrency ?? 0,
    defaultMinConcurrency: 0,
    maxBacklog: options.maxBacklog ?? 0,
    window: options.window ?? 0,
    windowPerSlot: options.windowPerSlot ?? 4,
    minWindow: options.minWindow ?? 16,
    leaseMs: options.leaseMs ?? 30_000,
    tickMs: options.tickMs ?? 1_000,
    resendAfterMs: options.resendAfterMs ?? 30_000,
    dispatchBatch: options.dispatchBatch ?? 200,
    priorityByTurn: options.priorityByTurn ?? false,
    turnsAtAdd: options.priorityByTurn !== false,
    share: 'jobs',
    slowLane: { failureThreshold: 0, windowMs: 0, share: 1, recoverAt: 0 },
  };
  for (const mode of FAIR_MODES) mode.resolve(options, resolved, refuse);
  return resolved;
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

const resolvedOnce = new WeakMap<object, ResolvedFairnessOptions | null>();

/**
 * The fairness options of a queue as registered (`registerQueue`'s options object, which its
 * definition and its pools' keep as `registered`), resolved once: at `registerQueue`, where a
 * refusal fails the boot; every later reader gets the same copy. `undefined`: not a fair queue.
 */
export function resolvedFairnessOf(
  registered: Readonly<CoreQueueOptions>,
): ResolvedFairnessOptions | undefined {
  let resolved = resolvedOnce.get(registered);
  if (resolved === undefined) {
    const fairness = (registered as FairnessQueueOptions).fairness;
    resolved = isFairnessOn(fairness) ? resolveFairnessOptions(registered.name, fairness!) : null;
    resolvedOnce.set(registered, resolved);
  }
  return resolved ?? undefined;
}

/** A queue's `fairness` option as registered (a pool shares its queue's). */
export function fairnessOf(
  definition: TenantQueueDefinition,
): TenantFairnessOptions | boolean | undefined {
  return (definition.registered as FairnessQueueOptions).fairness;
}
