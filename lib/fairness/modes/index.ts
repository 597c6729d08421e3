import type { FairMode } from './fair-mode.interface';
import { lanesMode } from './lanes/lanes.mode';
import { rateLimitMode } from './rate-limit/rate-limit.mode';
import { slowLaneMode } from './slow-lane/slow-lane.mode';
import { timeShareMode } from './time-share/time-share.mode';
import { floorsMode } from './floors/floors.mode';
import { fairKeysMode } from './fair-keys/fair-keys.mode';
import { budgetMode } from './budget/budget.mode';

/**
 * The fair gate's modes, in the order their options are checked and their config is written
 * (`resolveFairnessOptions`, `FairQueueConfig`). A new mode is a folder and an entry here.
 */
export const FAIR_MODES: readonly FairMode[] = [
  timeShareMode,
  fairKeysMode,
  floorsMode,
  slowLaneMode,
  rateLimitMode,
  lanesMode,
  budgetMode,
];

export type { FairMode, FairModeContext, NumberRule, Refuse } from './fair-mode.interface';
