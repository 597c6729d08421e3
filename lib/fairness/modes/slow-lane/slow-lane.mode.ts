import type { FairMode, NumberRule } from '../fair-mode.interface';
import type { ResolvedFairnessOptions } from '../../fairness-options';
import { checkOptions } from '../../fairness-option-checks';

const RULES: NumberRule[] = [
  ['failureThreshold', 0, true],
  ['windowMs', 100, true],
  ['share', Number.MIN_VALUE, false, 1],
  ['recoverAt', 0, true],
];
const NAMES = RULES.map((rule) => rule[0]);

/**
 * `slowLane`: a tenant whose jobs keep failing is served a share of its weight until it
 * recovers (fair-settle.lua counts, dispatch divides; `cfg.slowShare`).
 */
export const slowLaneMode: FairMode = {
  keys: ['slowLane'],
  resolve(input, resolved, refuse) {
    const slow = input.slowLane === false ? { failureThreshold: 0 } : (input.slowLane ?? {});
    if (typeof slow !== 'object' || Array.isArray(slow)) {
      throw refuse('slowLane', 'must be an object or false');
    }
    checkOptions(slow, 'slowLane.', NAMES, RULES, refuse);
    const failureThreshold = slow.failureThreshold ?? 20;
    const recoverAt = slow.recoverAt ?? Math.floor(failureThreshold / 2);
    if (failureThreshold > 0 && recoverAt >= failureThreshold) {
      throw refuse('slowLane.recoverAt', 'must be below slowLane.failureThreshold');
    }
    resolved.slowLane = {
      failureThreshold,
      windowMs: slow.windowMs ?? 60_000,
      share: slow.share ?? 0.1,
      recoverAt,
    };
  },
  script: (options) => ({ slowShare: options.slowLane.share }),
};

/** The slow lane's own script argument (JSON): threshold, window, recoverAt. */
export function slowLaneArg(options: ResolvedFairnessOptions): string {
  const slow = options.slowLane;
  return JSON.stringify({
    threshold: slow.failureThreshold,
    window: slow.windowMs,
    recoverAt: slow.recoverAt,
  });
}
