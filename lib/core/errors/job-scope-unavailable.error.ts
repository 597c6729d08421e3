import { TenantQueueError } from './tenant-queue.error';

/**
 * `JobScope` was used where no job is running (an HTTP request, a script, a worker event).
 * @publicApi
 */
export class JobScopeUnavailableError extends TenantQueueError {}
