import { TenantQueueError } from './tenant-queue.error';

/**
 * `TenantQueueModule.registerQueue(...)` was imported but no `TenantQueueModule.forRoot(...)`
 * (or `forRootAsync`, or `TenantQueueTestingModule.forRoot()`) is. Thrown while the app is built.
 * @publicApi
 */
export class TenantQueueRootMissingError extends TenantQueueError {}
