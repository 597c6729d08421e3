import { InvalidTenantQueueOptionsError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { TenantQueueDefinition } from '../types/queue-definition.interface';

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
export const QUEUE_NAME_RULE = 'must be 1-100 letters, digits, "_", "." or "-" (no ":")';

/** True for a valid queue (or pool) name: it becomes a BullMQ queue name and a hash tag. */
export function isQueueName(name: unknown): name is string {
  return typeof name === 'string' && QUEUE_NAME.test(name);
}

/**
 * The pools a `@TenantProcessor` on `definition` consumes in this process: the ones it asks for
 * (`pools`), or every pool of the queue. Dedicated pools come first and the shared pool last, so
 * `host.worker` stays the shared pool's worker when this process runs it.
 */
export function poolsToConsume(definition: TenantQueueDefinition, requested?: unknown): string[] {
  const all = [...(definition.pools ?? []), definition.name];
  if (requested === undefined) return all;
  const fail = (pool: unknown) =>
    new InvalidTenantQueueOptionsError(Messages.unknownConsumedPool(definition.name, pool, all));
  if (!Array.isArray(requested) || requested.length === 0) throw fail(requested);
  for (const pool of requested) if (!all.includes(pool)) throw fail(pool);
  return all.filter((pool) => requested.includes(pool));
}
