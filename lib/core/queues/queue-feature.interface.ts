import type { JobDispatcher, PreparedJob } from './job-dispatcher.interface';
import type { CoreQueueOptions, TenantQueueDefinition } from '../types/queue-definition.interface';
import type { ResolvedTenantQueueOptions } from '../options/core.options';

/**
 * A feature's slice of `registerQueue`'s options, checked and read while queues register (Nest
 * is still building providers then: plain functions of the options, given with the decorator).
 */
export interface QueueOptionsSlice {
  /**
   * Checks the feature's fields of one queue's options; throws a typed error naming the field.
   * `earlier`: the options of the queues this app registered before it.
   */
  checkQueue?(
    options: Readonly<CoreQueueOptions>,
    earlier: readonly Readonly<CoreQueueOptions>[],
  ): void;
  /**
   * The key group of a queue (checked options): the queue's keys take the group's hash tag
   * instead of their own (`{<prefix>:<group>}:<queue>`), and so do its pools'. Undefined: none.
   */
  keyGroupOf?(options: Readonly<CoreQueueOptions>): string | undefined;
}

/**
 * What a feature adds to every queue the kernel registers (fairness, telemetry): a check of each
 * job before anything is written, and a wrapper of its dispatcher. Declared with
 * `@TenantQueueFeature(order, slice)`.
 */
export interface QueueFeature {
  /**
   * The check of each job of this queue as the producer prepares it, before any write, or
   * undefined when the feature has nothing to check on this queue (asked once per queue).
   */
  jobCheckFor?(definition: TenantQueueDefinition): ((job: PreparedJob) => void) | undefined;
  /** Wraps the queue's dispatcher (asked once per queue); returns `inner` to leave it alone. */
  wrapDispatcher?(inner: JobDispatcher, definition: TenantQueueDefinition): JobDispatcher;
}

/** A provider that may claim a queue's dispatch path (the fair gate does, when fairness is on). */
export interface DispatcherSource {
  dispatcherFor(definition: TenantQueueDefinition): JobDispatcher | undefined;
}

/** Told about jobs a `TenantQueue` has just written (after dispatch); must not throw or block. */
export interface EnqueueObserver {
  enqueued(definition: TenantQueueDefinition, jobs: PreparedJob[]): void;
}

/** Picks the pool of each job of a call, as queue names (`ownIds`: caller-chosen job ids). */
export type JobRoute = (jobs: PreparedJob[], ownIds: ReadonlySet<string>) => Promise<string[]>;

/** Which pools a queue has, from its options, while queues register. */
export interface QueuePools {
  /** The pools of a queue being registered (validated; none when it has none). */
  poolsOf(options: Readonly<CoreQueueOptions>, root: ResolvedTenantQueueOptions): string[];
}

/**
 * Splits a queue into sub-queues (dedicated pools): the kernel registers one producer per pool
 * under the pool's name and asks the router where each job goes. Declared with
 * `@TenantRouter(pools)`; without one, no queue has pools.
 */
export interface JobRouter {
  /** Where each job of a pooled queue goes (asked once per queue, at its first write). */
  routeFor(definition: TenantQueueDefinition): JobRoute;
}
