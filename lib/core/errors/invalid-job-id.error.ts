import { TenantQueueError } from './tenant-queue.error';

/**
 * A job id asked about (`TenantQueueInspector.explain`) is not a non-empty string.
 * @publicApi
 */
export class InvalidJobIdError extends TenantQueueError {}
