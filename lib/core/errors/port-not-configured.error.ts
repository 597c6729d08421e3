import { TenantQueueError } from './tenant-queue.error';

/**
 * A processor needs an application port (e.g. `EntitlementChecker`) that the module options do
 * not provide. Thrown at bootstrap, before any worker starts.
 * @publicApi
 */
export class PortNotConfiguredError extends TenantQueueError {}
