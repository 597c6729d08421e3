import { InvalidTenantQueueOptionsError } from '../core/errors';
import {
  RegisterTenantQueueOptions,
  TenantQueueDefinition,
} from '../interfaces/register-queue-options.interface';
import { Messages } from '../tenant-queue.messages';
import { TenantTierOptions } from '../core/tenants/tenant-tier-options.interface';

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const NAME_RULE = 'must be 1-100 letters, digits, "_", "." or "-" (no ":")';

/** True for a valid queue (or pool) name: it becomes a BullMQ queue name and a hash tag. */
export function isQueueName(name: unknown): name is string {
  return typeof name === 'string' && QUEUE_NAME.test(name);
}

function invalid(field: string, why: string): InvalidTenantQueueOptionsError {
  return new InvalidTenantQueueOptionsError(Messages.invalidOptions(field, why));
}

/**
 * The dedicated pools of a queue, checked: its `pools`, the values of a static `routing` map, and
 * the tiers' `pools[queue]`. The queue's own name (the shared pool) is never among them.
 */
export function resolvePools(
  input: RegisterTenantQueueOptions,
  tiers: Readonly<Record<string, TenantTierOptions>>,
): string[] {
  const queue = input.name;
  const pools = new Set<string>();
  if (input.pools !== undefined) {
    if (!Array.isArray(input.pools)) throw invalid(`${queue}.pools`, 'must be an array of names');
    for (const pool of input.pools) {
      if (!isQueueName(pool))
        throw invalid(`${queue}.pools`, `${JSON.stringify(pool)} ${NAME_RULE}`);
      if (pool === queue) {
        throw invalid(`${queue}.pools`, `lists "${queue}" itself; the shared pool is the queue`);
      }
      pools.add(pool);
    }
  }
  const routing = input.routing;
  if (routing !== undefined && typeof routing !== 'function') {
    if (!routing || typeof routing !== 'object' || Array.isArray(routing)) {
      throw invalid(`${queue}.routing`, 'must be { [tenantId]: pool } or (tenant) => pool');
    }
    for (const [tenantId, pool] of Object.entries(routing)) {
      if (!isQueueName(pool)) {
        throw invalid(`${queue}.routing.${tenantId}`, `${JSON.stringify(pool)} ${NAME_RULE}`);
      }
      if (pool !== queue) pools.add(pool);
    }
  }
  for (const [tier, options] of Object.entries(tiers)) {
    const pool = options.pools?.[queue];
    if (pool === undefined) continue;
    if (!isQueueName(pool)) throw invalid(`tiers.${tier}.pools.${queue}`, NAME_RULE);
    if (pool !== queue) pools.add(pool);
  }
  return [...pools];
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
