import { TenantQueueError } from './tenant-queue.error';

/**
 * Redis did not answer while the app bootstrapped, and `redisAtBoot: 'required'` asks for a
 * failed boot rather than one that waits for Redis in the background.
 * @publicApi
 */
export class RedisUnavailableAtBootError extends TenantQueueError {}
