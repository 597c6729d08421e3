import { TenantQueueError } from './tenant-queue.error';

/**
 * Throw from a job handler when retrying cannot help (bad input, a permanent refusal): the job
 * fails at once, skipping its remaining attempts, and goes to the tenant's dead letters.
 * @publicApi
 */
export class NonRetryableError extends TenantQueueError {}
