export { TenantFairness } from './tenant-fairness.service';
export { addChunked } from './add-chunked';
export type { AddChunkedOptions, ChunkInfo } from './add-chunked';
export type {
  TenantFairnessOptions,
  TenantSlowLaneOptions,
} from './tenant-fairness-options.interface';
export type { TenantFairnessState } from './tenant-fairness-state.interface';
export type { SlowLaneEvent } from './slow-lane-event.interface';
