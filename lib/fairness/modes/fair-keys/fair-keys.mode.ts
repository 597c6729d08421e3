import type { FairMode } from '../fair-mode.interface';

/** `fairKey`: turns inside a tenant, by the job's fair key (fair-fairkey.lua, `cfg.fk`). */
export const fairKeysMode: FairMode = {
  keys: ['fairKey'],
  resolve(input, resolved, refuse) {
    if (input.fairKey !== undefined && input.fairKey !== 'job' && input.fairKey !== 'actor') {
      throw refuse('fairKey', "must be 'job' or 'actor'");
    }
    resolved.fairKey = input.fairKey;
  },
  script: (options) => (options.fairKey ? { fk: options.fairKey } : {}),
};
