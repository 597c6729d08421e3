import { TenantQueueError } from '../core/errors';

/**
 * No dead letter with that job id exists for that tenant (it may belong to another tenant).
 * @publicApi
 */
export class DeadLetterNotFoundError extends TenantQueueError {}
