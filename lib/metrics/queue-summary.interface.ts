/**
 * Jobs of a queue in each of BullMQ's states, all tenants together.
 * @publicApi
 */
export interface QueueJobCounts {
  waiting: number;
  prioritized: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

/**
 * One queue (or one dedicated pool of it), as `TenantQueueInspector.getQueue` reads it.
 * @publicApi
 */
export interface TenantQueueSummary {
  queue: string;
  /** The queue this is a dedicated pool of; null for a queue itself. */
  poolOf: string | null;
  /** Workers consuming it in every process on this Redis; null when Redis refuses CLIENT LIST. */
  workers: number | null;
  /**
   * This app produces to the queue, and no worker consumes it anywhere: its jobs wait until one
   * starts (usually a `@TenantProcessor` class missing from `providers`). False when unknown.
   */
  noConsumer: boolean;
  /**
   * True when the queue has a fair gate. Its jobs are in BullMQ from `add()` on, so `counts`
   * shows them all: `delayed` includes the jobs the gate holds (due 2039) until their turn.
   */
  fair: boolean;
  counts: QueueJobCounts;
}
