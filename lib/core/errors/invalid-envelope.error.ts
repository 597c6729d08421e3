import { TenantQueueError } from './tenant-queue.error';

/**
 * A `_tenant` envelope failed validation (or its signature).
 * @publicApi
 */
export class InvalidEnvelopeError extends TenantQueueError {}
