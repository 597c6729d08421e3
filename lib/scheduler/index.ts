export { TenantScheduler } from './tenant-scheduler';
export { TenantCron } from './tenant-cron.decorator';
export type { TenantCronOptions, TenantCronRun } from './tenant-cron.decorator';
export { SchedulerClock } from './scheduler-clock';
// @internal: the checks of the `scheduler` options and of `@TenantCron`, which the testing module
// runs too.
export { TenantCronCheck } from './tenant-cron.check';
export {
  TENANT_SCHEDULER_OPTIONS,
  resolveTenantSchedulerOptions,
} from './tenant-scheduler.options';
export type {
  MissedRunPolicy,
  ScheduleTimezone,
  SchedulerTickResult,
  TenantSchedule,
  TenantScheduleInput,
  TenantScheduleJob,
} from './tenant-schedule.interface';
export {
  JOB_ID_SEPARATOR,
  formatOccurrence,
  tenantCronJobId,
  tenantScheduleJobId,
} from './schedule-job-id';
export { InvalidScheduleError } from './invalid-schedule.error';
// @internal: for the dashboard and the health indicator.
export { TenantCronExplorer } from './tenant-cron.explorer';
export { ScheduleTicker } from './schedule-ticker';
export type { TenantSchedulerOptions } from './tenant-scheduler-options.interface';
