export { TenantFairness } from './tenant-fairness.service';
export { addChunked } from './add-chunked';
export type { AddChunkedOptions, ChunkInfo } from './add-chunked';
export type {
  TenantFairnessOptions,
  TenantSlowLaneOptions,
} from './tenant-fairness-options.interface';
export type { TenantFairnessState } from './tenant-fairness-state.interface';
export type { SlowLaneEvent } from './slow-lane-event.interface';
export { TenantBacklogFullError, InvalidLaneError, InvalidFairKeyError } from './errors';
// @internal: for the testing module and bull-board.
export { FairQueueFeature } from './fair-queue.feature';
export { fairnessOf, isFairnessOn } from './fairness-options';
export { fairConfigOf } from './fair-queue-config';
export type { FairnessQueueOptions } from './fairness-options';
export type { FairJobOptions } from './fair-job-options.interface';
