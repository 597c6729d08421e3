import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { RedisClient } from '../core/redis/tenant-queue.redis';
import { LuaScripts } from '../core/redis/lua-scripts';

const CHUNK = 1000;
const SCRIPTS = new LuaScripts<{
  tqPoolIds(...args: (string | number)[]): Promise<string[]>;
}>(__dirname, { tqPoolIds: { file: 'pool-ids.lua' } });

/** How long a caller-chosen job id stays on the pool that took it first. */
export const POOL_ID_TTL_MS = 24 * 60 * 60 * 1000;

/** @internal Where caller-chosen job ids of a pooled queue went first. */
export interface PoolIdLedger {
  /**
   * The pool of each id: `pools[i]` when the id is new (or was another owner's), else the pool
   * that took it first. `owners[i]`: `t<tenant id>`, or `s` for a job without tenant.
   */
  claim(ids: string[], pools: string[], owners: string[]): Promise<string[]>;
}

/** @internal The ledger in Redis, under the queue's hash tag (one Redis Cluster slot). */
export class RedisPoolIdLedger implements PoolIdLedger {
  constructor(
    private readonly definition: TenantQueueDefinition,
    private readonly client: () => RedisClient,
    private readonly ttlMs = POOL_ID_TTL_MS,
  ) {}

  async claim(ids: string[], pools: string[], owners: string[]): Promise<string[]> {
    const redis = SCRIPTS.on(this.client());
    const out: string[] = [];
    for (let i = 0; i < ids.length; i += CHUNK) {
      const keys = ids.slice(i, i + CHUNK).map((id) => `${this.definition.bullPrefix}:~pool:${id}`);
      out.push(
        ...(await redis.tqPoolIds(
          keys.length,
          ...keys,
          this.ttlMs,
          ...pools.slice(i, i + CHUNK),
          ...owners.slice(i, i + CHUNK),
        )),
      );
    }
    return out;
  }
}
