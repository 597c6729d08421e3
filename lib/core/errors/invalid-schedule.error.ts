import { TenantQueueError } from './tenant-queue.error';

/** A schedule's cron expression, time zone or options are invalid. Nothing was stored. */
export class InvalidScheduleError extends TenantQueueError {}
