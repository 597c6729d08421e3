import type { FairMode } from '../fair-mode.interface';

/**
 * `share: 'time'`: a turn costs the job's expected run time instead of one job
 * (fair-time.lua, `cfg.ts`).
 */
export const timeShareMode: FairMode = {
  keys: ['share'],
  resolve(input, resolved, refuse) {
    const share = input.share ?? 'jobs';
    if (share !== 'jobs' && share !== 'time') {
      throw refuse('share', `must be 'jobs' or 'time' (got ${JSON.stringify(share)})`);
    }
    resolved.share = share;
    // In time share a turn of short jobs takes many jobs: K caps the run-time ratio honoured.
    if (share === 'time' && input.maxConsecutive === undefined) resolved.maxConsecutive = 1000;
  },
  script: (options) => (options.share === 'time' ? { ts: true } : {}),
};
