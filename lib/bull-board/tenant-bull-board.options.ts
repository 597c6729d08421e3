import type { Queue } from 'bullmq';

/**
 * What bull-board's queue adapters have in common (`BullMQAdapter` from `@bull-board/api`).
 * @publicApi
 */
export interface BullBoardQueueAdapter {
  getDescription(): string;
  getJobCounts(): Promise<Record<string, number>>;
}

/**
 * Options of `TenantBullBoardModule.register`.
 * @publicApi
 */
export interface TenantBullBoardOptions {
  /** The adapter class: `BullMQAdapter` from `@bull-board/api/bullMQAdapter`. */
  adapter: new (queue: Queue, options?: Record<string, unknown>) => BullBoardQueueAdapter;
  /**
   * Queues (or pools, by name) shown on the board.
   * @default every queue registered with this module, and each dedicated pool
   */
  queues?: string[];
  /** bull-board's per-queue options (`readOnlyMode`, `allowRetries`, ...), for every queue. */
  adapterOptions?: Record<string, unknown>;
  /**
   * Where `TenantQueueDashboardModule` is mounted: the description of a fair queue links there
   * for the per-tenant backlog (leave unset when the app does not mount it).
   */
  dashboardPath?: string;
  /**
   * How often a fair queue's description re-reads the tenants' backlog (ms), at most; it is
   * read when bull-board refreshes the queue's counts.
   * @default 5000
   */
  backlogRefreshMs?: number;
}
