import { TenantQueueError } from '../core/errors';

/**
 * The tenant directory or a checker threw or timed out while a job was being guarded (a transient
 * failure: the attempt fails and BullMQ retries the job; it is never cancelled for this), or
 * while `DeadLetters.replay` checked the tenant (nothing replayed; call it again).
 * @publicApi
 */
export class TenantPortUnavailableError extends TenantQueueError {}
