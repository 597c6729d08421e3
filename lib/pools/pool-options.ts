import { InvalidTenantQueueOptionsError } from '../core/errors';
import { PooledQueueOptions } from './pool-queue-options.interface';
import { Messages } from '../tenant-queue.messages';
import { QUEUE_NAME_RULE as NAME_RULE, isQueueName } from '../core/queues/queue-names';
import { TenantTierOptions } from '../core/types/tenant-tier-options.interface';

export { poolsToConsume } from '../core/queues/queue-names';

function invalid(field: string, why: string): InvalidTenantQueueOptionsError {
  return new InvalidTenantQueueOptionsError(Messages.invalidOptions(field, why));
}

/**
 * The dedicated pools of a queue, checked: its `pools`, the values of a static `routing` map, and
 * the tiers' `pools[queue]`. The queue's own name (the shared pool) is never among them.
 */
export function resolvePools(
  input: PooledQueueOptions,
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
