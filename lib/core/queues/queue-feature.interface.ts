import type { JobDispatcher, PreparedJob } from './job-dispatcher.interface';
import type { CoreQueueOptions, TenantQueueDefinition } from '../types/queue-definition.interface';

/**
 * What a feature adds to every queue the kernel registers (fairness, telemetry): checks of the
 * queue's options and of each job before anything is written, and a wrapper of its dispatcher.
 * Registered with `TenantJobPipeline.useQueueFeature`.
 */
export interface QueueFeature {
  /** Checks `registerQueue`'s options (the feature's own slice); throws a typed error. */
  checkQueue?(options: Readonly<CoreQueueOptions>): void;
  /**
   * The key group of a queue (checked options): the queue's keys take the group's hash tag
   * instead of their own (`{<prefix>:<group>}:<queue>`), and so do its pools'. Undefined: none.
   */
  keyGroupOf?(options: Readonly<CoreQueueOptions>): string | undefined;
  /**
   * The check of each job of this queue as the producer prepares it, before any write, or
   * undefined when the feature has nothing to check on this queue (asked once per queue).
   */
  jobCheckFor?(definition: TenantQueueDefinition): ((job: PreparedJob) => void) | undefined;
  /** Wraps the queue's dispatcher (asked once per queue); returns `inner` to leave it alone. */
  wrapDispatcher?(inner: JobDispatcher, definition: TenantQueueDefinition): JobDispatcher;
}

/** Picks the pool of each job of a call, as queue names (`ownIds`: caller-chosen job ids). */
export type JobRoute = (jobs: PreparedJob[], ownIds: ReadonlySet<string>) => Promise<string[]>;

/**
 * Splits a queue into sub-queues (dedicated pools): the kernel registers one producer per pool
 * under the pool's name and asks the router where each job goes. Registered with
 * `TenantJobPipeline.useRouter`; without one, no queue has pools.
 */
export interface JobRouter {
  /** The pools of a queue being registered (validated; none when it has none). */
  poolsOf(options: Readonly<CoreQueueOptions>): string[];
  /** Where each job of a pooled queue goes (asked once per queue). */
  routeFor(definition: TenantQueueDefinition): JobRoute;
}
