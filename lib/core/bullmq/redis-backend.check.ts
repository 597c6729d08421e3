import type { QueueBase } from 'bullmq';
import { RedisBackendRequiredError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { defaultNonRedisBackend, nonRedisBackendOf } from './bullmq-seam';

/**
 * Refuses a tenant queue that BullMQ would keep outside Redis: before its queue or worker is
 * made (BullMQ's default backend), and for one made elsewhere (an adopted @nestjs/bullmq worker).
 */
export function assertRedisBackend(queue: string, made?: QueueBase): void {
  const backend = made ? nonRedisBackendOf(made) : defaultNonRedisBackend();
  if (backend !== undefined) {
    throw new RedisBackendRequiredError(
      queue,
      backend,
      Messages.redisBackendRequired(queue, backend),
    );
  }
}
