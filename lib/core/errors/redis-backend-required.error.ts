import { TenantQueueError } from './tenant-queue.error';

/**
 * BullMQ is set to keep a queue somewhere other than Redis (bullmq 6's
 * `setDefaultBackendFactory(createPostgresBackend)` or a per-queue backend): the module's fair
 * gate, schedules, dead letters, idempotency and visibility are Redis scripts, so it refuses to
 * boot rather than run half of them. `backend` names what BullMQ was given; nothing was written.
 * @publicApi
 */
export class RedisBackendRequiredError extends TenantQueueError {
  constructor(
    readonly queue: string,
    readonly backend: string,
    message: string,
  ) {
    super(message);
  }
}
