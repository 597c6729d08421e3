import type { FairMode } from '../fair-mode.interface';

/** `defaultMinConcurrency`: guaranteed floors (fair-floor.lua, `cfg.dmin`). */
export const floorsMode: FairMode = {
  keys: ['defaultMinConcurrency'],
  rules: [['defaultMinConcurrency', 0, true]],
  resolve(input, resolved, refuse) {
    const { defaultConcurrency: cap = 0, defaultMinConcurrency: floor = 0 } = input;
    if (cap > 0 && floor > cap) {
      throw refuse('defaultMinConcurrency', `must not be above defaultConcurrency (${cap})`);
    }
    resolved.defaultMinConcurrency = floor;
  },
  script: (options) =>
    options.defaultMinConcurrency ? { dmin: options.defaultMinConcurrency } : {},
};
