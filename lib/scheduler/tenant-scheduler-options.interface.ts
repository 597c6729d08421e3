/**
 * The scheduler's settings, under the module's `scheduler` option.
 * @publicApi
 */
export interface TenantSchedulerOptions {
  /**
   * Tick automatically in this process. Any number of processes may tick; each occurrence is
   * claimed by exactly one. Turn off in processes that should only produce or serve HTTP.
   * @default true
   */
  enabled?: boolean;
  /** Milliseconds between two ticks. @default 1000 */
  tickInterval?: number;
  /** Most due schedules one tick reads and claims per round trip. @default 500 */
  batchSize?: number;
  /**
   * Milliseconds a claimed occurrence may wait for its job to be enqueued before another process
   * re-sends it (after a crash between claim and enqueue). The job id makes the repeat harmless.
   * @default 30000
   */
  claimTimeout?: number;
  /**
   * An occurrence claimed more than this many milliseconds after its time counts as missed (the
   * scheduler was down), and the schedule's `missed` policy decides whether it runs. At least
   * 2 x `tickInterval` (a tick claims an occurrence up to an interval after it is due), else
   * `InvalidTenantQueueOptionsError` at boot.
   * @default 60000
   */
  lateAfter?: number;
  /** Queue that carries `@TenantCron` jobs without their own `queue` option. @default 'tq-cron' */
  cronQueue?: string;
  /** Concurrency of each worker the scheduler runs for `@TenantCron` jobs. @default 10 */
  cronConcurrency?: number;
}
