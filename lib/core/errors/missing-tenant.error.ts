import { TenantQueueError } from './tenant-queue.error';

/**
 * A tenant-scoped operation ran with no tenant in context. Nothing was written.
 * @publicApi
 */
export class MissingTenantError extends TenantQueueError {}
