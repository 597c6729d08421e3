import { TenantQueueError } from '../core/errors';

/**
 * A schedule's cron expression, time zone or options are invalid. Nothing was stored.
 * @publicApi
 */
export class InvalidScheduleError extends TenantQueueError {}
