import { InvalidTenantQueueOptionsError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { unknownOptionWhy } from './option-names';
import {
  TenantLimits,
  TenantRateLimit,
  TenantTierOptions,
} from '../types/tenant-tier-options.interface';

const TIER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const LIMIT_KEYS = new Set(['weight', 'maxConcurrency', 'minConcurrency', 'rateLimit', 'lanes']);
const TIER_KEYS = new Set([...LIMIT_KEYS, 'queues', 'pools']);
const RATE_KEYS = ['max', 'per', 'burst'];

function invalid(field: string, why: string): InvalidTenantQueueOptionsError {
  return new InvalidTenantQueueOptionsError(Messages.invalidOptions(field, why));
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value);

/** Checks a rate limit (`{ max, per, burst? }`); `field` names it in the error. */
export function checkRateLimit(field: string, value: unknown): asserts value is TenantRateLimit {
  if (!isObject(value)) throw invalid(field, 'must be { max, per, burst? } or false');
  for (const key of Object.keys(value)) {
    if (!RATE_KEYS.includes(key))
      throw invalid(`${field}.${key}`, unknownOptionWhy(key, RATE_KEYS));
  }
  const { max, per, burst } = value;
  if (typeof max !== 'number' || !Number.isFinite(max) || max <= 0) {
    throw invalid(`${field}.max`, 'must be a number > 0 (jobs per interval)');
  }
  if (typeof per !== 'number' || !Number.isInteger(per) || per < 1) {
    throw invalid(`${field}.per`, 'must be an integer >= 1 (the interval, in ms)');
  }
  if (burst !== undefined && (typeof burst !== 'number' || !Number.isInteger(burst) || burst < 1)) {
    throw invalid(`${field}.burst`, 'must be an integer >= 1');
  }
}

/** Checks one set of limits (a tier, a tier's queue override, a tenant record's overrides). */
export function checkLimits(field: string, input: unknown, keys = LIMIT_KEYS): void {
  if (!isObject(input)) throw invalid(field, 'must be an object');
  for (const key of Object.keys(input)) {
    if (!keys.has(key)) throw invalid(`${field}.${key}`, unknownOptionWhy(key, [...keys]));
  }
  const limits = input as TenantLimits;
  if (
    limits.weight !== undefined &&
    (typeof limits.weight !== 'number' || !(limits.weight > 0) || limits.weight > 1e6)
  ) {
    throw invalid(`${field}.weight`, 'must be a number > 0 and <= 1000000');
  }
  if (
    limits.maxConcurrency !== undefined &&
    (!Number.isInteger(limits.maxConcurrency) || limits.maxConcurrency < 0)
  ) {
    throw invalid(`${field}.maxConcurrency`, 'must be an integer >= 0 (0 = no cap)');
  }
  const floor = limits.minConcurrency;
  if (floor !== undefined && (!Number.isInteger(floor) || floor < 0)) {
    throw invalid(`${field}.minConcurrency`, 'must be an integer >= 0 (0 = no floor)');
  }
  if (floor !== undefined && (limits.maxConcurrency ?? 0) > 0 && floor > limits.maxConcurrency!) {
    throw invalid(
      `${field}.minConcurrency`,
      `must not be above maxConcurrency (${limits.maxConcurrency})`,
    );
  }
  if (limits.rateLimit !== undefined && limits.rateLimit !== false) {
    checkRateLimit(`${field}.rateLimit`, limits.rateLimit);
  }
  if (limits.lanes !== undefined) {
    if (!isObject(limits.lanes)) throw invalid(`${field}.lanes`, 'must be { [lane]: weight }');
    for (const [lane, weight] of Object.entries(limits.lanes)) {
      if (typeof weight !== 'number' || !(weight > 0) || weight > 1e6) {
        throw invalid(`${field}.lanes.${lane}`, 'must be a number > 0 and <= 1000000');
      }
    }
  }
}

/** Validates `tiers` (module option) and returns it frozen, without a prototype (a tier named
 * `constructor` in a directory record must not find `Object.prototype.constructor`). */
export function resolveTiers(input: unknown): Readonly<Record<string, TenantTierOptions>> {
  if (input === undefined) return Object.freeze(Object.create(null));
  if (!isObject(input))
    throw invalid('tiers', 'must be { [tier]: { weight, maxConcurrency, ... } }');
  for (const [name, tier] of Object.entries(input)) {
    if (!TIER_NAME.test(name)) throw invalid(`tiers.${name}`, 'is not a valid tier name');
    checkLimits(`tiers.${name}`, tier, TIER_KEYS);
    const { queues, pools } = tier as TenantTierOptions;
    if (queues !== undefined) {
      if (!isObject(queues)) throw invalid(`tiers.${name}.queues`, 'must be { [queue]: limits }');
      for (const [queue, limits] of Object.entries(queues)) {
        checkLimits(`tiers.${name}.queues.${queue}`, limits);
      }
    }
    if (pools !== undefined) {
      if (!isObject(pools)) throw invalid(`tiers.${name}.pools`, 'must be { [queue]: pool }');
      for (const [queue, pool] of Object.entries(pools)) {
        if (typeof pool !== 'string' || !pool) {
          throw invalid(`tiers.${name}.pools.${queue}`, 'must be a pool (queue) name');
        }
      }
    }
  }
  return Object.freeze(Object.assign(Object.create(null), input));
}

/** Cache time of tenant profiles (tier and overrides read from the directory). */
export function resolveTierCacheMs(input: unknown): number {
  if (input === undefined) return 30_000;
  if (typeof input !== 'number' || !Number.isInteger(input) || input < 0) {
    throw invalid('tierCacheMs', 'must be an integer >= 0 (ms; 0 reads the directory every time)');
  }
  return input;
}
