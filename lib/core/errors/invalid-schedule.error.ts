import { TenantQueueError } from './tenant-queue.error';

/**
 * A schedule's cron expression, time zone or options are invalid. Nothing was stored.
 * @publicApi
 */
export class InvalidScheduleError extends TenantQueueError {}
