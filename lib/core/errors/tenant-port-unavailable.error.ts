import { TenantQueueError } from './tenant-queue.error';

/**
 * The tenant directory or a checker threw or timed out while a job was being guarded (a transient
 * failure: the attempt fails and BullMQ retries the job; it is never cancelled for this), or
 * while `DeadLetters.replay` checked the tenant (nothing replayed; call it again), or when
 * `TenantTiers` read a tenant's record for its tier or pool (pool routing, fairness hints, the
 * dashboard) and the directory did not answer in time.
 * @publicApi
 */
export class TenantPortUnavailableError extends TenantQueueError {}
