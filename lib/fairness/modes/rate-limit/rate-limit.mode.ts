import { checkRateLimit } from '../../../core/options/tiers.options';
import type { FairMode } from '../fair-mode.interface';
import { encodeRate } from './rate';

/**
 * `rateLimit`: the queue's default rate limit per tenant, GCRA on the tenant's theoretical
 * arrival time (dispatch in fair-dispatch.lua; `cfg.rl`).
 */
export const rateLimitMode: FairMode = {
  keys: ['rateLimit'],
  resolve(input, resolved, refuse) {
    const rateLimit = input.rateLimit;
    if (rateLimit !== undefined) {
      // A tiers-style refusal, re-labelled with the queue's fairness path.
      try {
        checkRateLimit('rateLimit', rateLimit);
      } catch (error) {
        const field = /option "([^"]+)": (.*)\.$/.exec((error as Error).message);
        if (!field) throw error;
        throw refuse(field[1], field[2]);
      }
    }
    resolved.rateLimit = rateLimit;
  },
  script: (options) => (options.rateLimit ? { rl: encodeRate(options.rateLimit) } : {}),
};
