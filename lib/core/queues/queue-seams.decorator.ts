import { declareSeam } from '../seams/seam-declaration';
import type { QueueOptionsSlice, QueuePools } from './queue-feature.interface';

/**
 * Marks a provider as a `QueueFeature`, after those of lower `order` (its dispatcher wrapper
 * inside theirs); `options`: its slice of `registerQueue`'s options, checked as queues register.
 */
export const TenantQueueFeature = (order: number, options?: QueueOptionsSlice): ClassDecorator =>
  declareSeam({ kind: 'queue-feature', phase: 0, order, options });

/** Marks a provider as a `DispatcherSource`: the first, by `order`, to claim a queue writes it. */
export const TenantDispatcher = (order: number): ClassDecorator =>
  declareSeam({ kind: 'dispatcher', phase: 0, order });

/** Marks a provider as an `EnqueueObserver`, told after those of lower `order`. */
export const TenantEnqueueObserver = (order: number): ClassDecorator =>
  declareSeam({ kind: 'enqueue-observer', phase: 0, order });

/** Marks the provider that splits queues into pools (`JobRouter`; one per app). */
export const TenantRouter = (pools: QueuePools): ClassDecorator =>
  declareSeam({ kind: 'router', phase: 0, order: 0, options: pools });
