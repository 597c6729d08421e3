import { InvalidTenantQueueOptionsError } from '../errors';
import { Messages } from '../tenant-queue.messages';
import { TenantFairnessOptions } from './tenant-fairness-options.interface';

/** Fairness options of one queue with every default filled in. */
export interface ResolvedFairnessOptions {
  defaultWeight: number;
  maxConsecutive: number;
  defaultConcurrency: number;
  maxBacklog: number;
  window: number;
  windowPerSlot: number;
  minWindow: number;
  leaseMs: number;
  tickMs: number;
  resendAfterMs: number;
  dispatchBatch: number;
  slowLane: { failureThreshold: number; windowMs: number; share: number; recoverAt: number };
}

type Rule = [key: string, min: number, integer: boolean, max?: number];

const RULES: Rule[] = [
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

const SLOW_RULES: Rule[] = [
  ['failureThreshold', 0, true],
  ['windowMs', 100, true],
  ['share', Number.MIN_VALUE, false, 1],
  ['recoverAt', 0, true],
];

function checkNumbers(queue: string, path: string, input: object, rules: Rule[]): void {
  const known = new Set(rules.map((rule) => rule[0]));
  for (const key of Object.keys(input)) {
    if (!known.has(key) && key !== 'enabled' && key !== 'slowLane') {
      throw invalid(queue, `${path}${key}`, 'is not a known option');
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
  checkNumbers(queue, '', options, RULES);
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
  return {
    defaultWeight: options.defaultWeight ?? 1,
    maxConsecutive: options.maxConsecutive ?? 5,
    defaultConcurrency: options.defaultConcurrency ?? 0,
    maxBacklog: options.maxBacklog ?? 0,
    window: options.window ?? 0,
    windowPerSlot: options.windowPerSlot ?? 4,
    minWindow: options.minWindow ?? 16,
    leaseMs: options.leaseMs ?? 30_000,
    tickMs: options.tickMs ?? 1_000,
    resendAfterMs: options.resendAfterMs ?? 30_000,
    dispatchBatch: options.dispatchBatch ?? 200,
    slowLane: {
      failureThreshold,
      windowMs: slow.windowMs ?? 60_000,
      share: slow.share ?? 0.1,
      recoverAt,
    },
  };
}
