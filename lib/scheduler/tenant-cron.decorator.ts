import { SetMetadata } from '@nestjs/common';
import type { JobsOptions } from 'bullmq';
import { MissedRunPolicy, ScheduleTimezone } from './tenant-schedule.interface';

export const TENANT_CRON_METADATA = 'tenant-queue:cron';

/**
 * Options of `@TenantCron(expression, options)`.
 * @publicApi
 */
export interface TenantCronOptions {
  /**
   * Unique name: the job name, and the first part of each job id
   * (`<name>~<tenantId>~<yyyyMMddTHHmmssZ>`). Letters, digits, `_`, `.`, `-`.
   */
  name: string;
  /**
   * Zone whose wall clock the expression follows: `'UTC'`, an IANA zone, or `'tenant'` for
   * each tenant's own `timezone` from the `TenantDirectory` (UTC when it has none).
   * @default 'UTC'
   */
  timezone?: ScheduleTimezone;
  /** Occurrences that passed while no scheduler ran: skip them, run the latest, or run each. @default 'skip' */
  missed?: MissedRunPolicy;
  /** With `missed: 'all'`, the most missed occurrences run per tenant (the latest ones). @default 10 */
  maxCatchUp?: number;
  /** Queue of the per-tenant jobs; the scheduler runs its worker. @default the `scheduler.cronQueue` option */
  queue?: string;
  /**
   * BullMQ options of each per-tenant job (attempts, backoff, removeOnComplete...); `parent` is
   * refused at boot (one fixed parent for every tenant and occurrence).
   */
  jobOptions?: Omit<JobsOptions, 'jobId' | 'repeat' | 'parent'>;
}

export interface TenantCronMetadata extends TenantCronOptions {
  expression: string;
}

/**
 * What a `@TenantCron` method receives: one tenant's run of one occurrence.
 * @publicApi
 */
export interface TenantCronRun {
  name: string;
  tenantId: string;
  /** The scheduled instant of this occurrence (not when it started). */
  occurrence: Date;
  jobId: string;
}

/**
 * Runs a provider method for every active tenant at each occurrence of a cron expression: the
 * scheduler enqueues one job per tenant, and a worker calls the method in that tenant's context
 * with a `TenantCronRun`. One instance claims each occurrence, however many run.
 * @publicApi
 */
export const TenantCron = (expression: string, options: TenantCronOptions): MethodDecorator =>
  SetMetadata<string, TenantCronMetadata>(TENANT_CRON_METADATA, { ...options, expression });
