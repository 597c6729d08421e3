import type { JobsOptions } from 'bullmq';

/**
 * What to do with occurrences that passed while no scheduler was running.
 * @publicApi
 */
export type MissedRunPolicy = 'skip' | 'once' | 'all';

/**
 * `'UTC'`, an IANA zone (`'Europe/Kyiv'`), or `'tenant'`: the tenant's zone from the directory.
 * @publicApi
 */
export type ScheduleTimezone = 'UTC' | 'tenant' | (string & {});

/**
 * The job a tenant schedule enqueues at each occurrence (with actor `system`).
 * @publicApi
 */
export interface TenantScheduleJob {
  /** A queue registered with `TenantQueueModule.registerQueue`. */
  queue: string;
  /** Job name. */
  name: string;
  /** Job payload (plain JSON object). @default {} */
  data?: Record<string, unknown>;
  /**
   * BullMQ job options; `jobId` is always the schedule's own, and `parent` is refused (one fixed
   * parent for every occurrence).
   */
  opts?: Omit<JobsOptions, 'jobId' | 'repeat' | 'parent'>;
}

/**
 * Input of `TenantScheduler.upsert`.
 * @publicApi
 */
export interface TenantScheduleInput {
  /** Five-field cron expression, matched against wall-clock time in `timezone`. */
  cron: string;
  /** @default 'UTC' */
  timezone?: ScheduleTimezone;
  /** A disabled schedule is kept but never runs. @default true */
  enabled?: boolean;
  /** @default 'skip' */
  missed?: MissedRunPolicy;
  /** With `missed: 'all'`, the most missed occurrences run (the latest ones). @default 10 */
  maxCatchUp?: number;
  job: TenantScheduleJob;
}

/**
 * A stored tenant schedule.
 * @publicApi
 */
export interface TenantSchedule extends Required<Omit<TenantScheduleInput, 'job'>> {
  tenantId: string;
  key: string;
  job: TenantScheduleJob;
  /** The next run, or null when disabled (or the expression has no further match). */
  nextRunAt: Date | null;
}

/**
 * What one scheduler tick did.
 * @publicApi
 */
export interface SchedulerTickResult {
  /** Due schedules read. */
  due: number;
  /** Occurrences this process claimed (others may have claimed the rest). */
  claimed: number;
  /** Jobs enqueued (per-tenant jobs and `@TenantCron` fan-out jobs). */
  enqueued: number;
  /** Claims of crashed processes re-sent. */
  recovered: number;
  /** Ids of the jobs enqueued. */
  jobIds: string[];
}
