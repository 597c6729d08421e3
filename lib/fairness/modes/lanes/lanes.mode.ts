import { unknownOptionWhy } from '../../../core/options/option-names';
import type { ResolvedFairnessOptions } from '../../fairness-options';
import type { TenantLaneOptions } from '../../tenant-fairness-options.interface';
import type { FairMode, Refuse } from '../fair-mode.interface';

const LANE_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * `lanes` and `defaultLane`: each lane keeps its reserved share of the worker slots (dispatch in
 * fair-dispatch.lua, `cfg.lanes` and `cfg.shares`).
 */
export const lanesMode: FairMode = {
  keys: ['lanes', 'defaultLane'],
  resolve(input, resolved, refuse) {
    const lanes = resolveLanes(input.lanes, refuse);
    const defaultLane = input.defaultLane ?? lanes[0]?.name ?? '';
    if (input.defaultLane !== undefined && !lanes.some((lane) => lane.name === defaultLane)) {
      throw refuse('defaultLane', 'must name one of the declared lanes');
    }
    // Lanes give every admitted job its lane's BullMQ priority: a turn cannot be one too.
    if (lanes.length > 1 && input.priorityByTurn === true) {
      throw refuse(
        'priorityByTurn',
        "cannot be true on a queue with lanes, whose jobs take their lane's BullMQ priority: " +
          'remove priorityByTurn (turns still hold inside each lane), or declare one lane at most',
      );
    }
    resolved.lanes = lanes;
    resolved.defaultLane = defaultLane;
  },
  // One declared lane is the queue itself: the gate runs it without lanes (its jobs' lane is '',
  // FairQueueConfig.laneOf), as every path that counts lanes takes fewer than two as none.
  script: (options) =>
    options.lanes.length > 1
      ? { lanes: options.lanes.map((l) => l.name), shares: laneShares(options.lanes) }
      : {},
};

/** Lane shares as the gate uses them: the first lane also gets what no lane reserved. */
function laneShares(lanes: ResolvedFairnessOptions['lanes']): number[] {
  const spare = Math.max(0, 1 - lanes.reduce((sum, lane) => sum + lane.share, 0));
  return lanes.map((lane, index) => (index === 0 ? lane.share + spare : lane.share));
}

function resolveLanes(
  input: Record<string, TenantLaneOptions> | undefined,
  refuse: Refuse,
): ResolvedFairnessOptions['lanes'] {
  if (input === undefined) return [];
  if (!input || typeof input !== 'object' || Array.isArray(input) || !Object.keys(input).length) {
    throw refuse('lanes', 'must be { [lane]: { share, jobs? } } with at least one lane');
  }
  const lanes: ResolvedFairnessOptions['lanes'] = [];
  let total = 0;
  const named = new Set<string>();
  for (const [name, lane] of Object.entries(input)) {
    if (!LANE_NAME.test(name)) throw refuse(`lanes.${name}`, 'is not a valid lane name');
    if (!lane || typeof lane !== 'object')
      throw refuse(`lanes.${name}`, 'must be { share, jobs? }');
    for (const key of Object.keys(lane)) {
      if (key !== 'share' && key !== 'jobs')
        throw refuse(`lanes.${name}.${key}`, unknownOptionWhy(key, ['share', 'jobs']));
    }
    if (typeof lane.share !== 'number' || !(lane.share >= 0 && lane.share <= 1)) {
      throw refuse(`lanes.${name}.share`, 'must be a number from 0 to 1');
    }
    const jobs = lane.jobs ?? [];
    if (!Array.isArray(jobs) || jobs.some((job) => typeof job !== 'string')) {
      throw refuse(`lanes.${name}.jobs`, 'must be a list of job names');
    }
    for (const job of jobs) {
      if (named.has(job)) throw refuse(`lanes.${name}.jobs`, `names "${job}" twice`);
      named.add(job);
    }
    total += lane.share;
    lanes.push({ name, share: lane.share, jobs });
  }
  if (total > 1 + 1e-9) throw refuse('lanes', 'shares must add up to at most 1');
  return lanes;
}
