import type { RedisClient } from '../redis/tenant-queue.redis';

/**
 * Tiers assigned at run time (an operator's override of the directory record's `tier`): one
 * Redis hash per app prefix, the tenant id itself as the field (any bytes are fine there), so
 * every process sees an assignment once its cached profile expires. Without Redis (the testing
 * module) they live in this process.
 */
export class TierOverrides {
  private readonly memory = new Map<string, string>();

  constructor(
    private readonly key: string,
    private readonly client: (() => RedisClient) | undefined,
  ) {}

  async get(tenantId: string): Promise<string | undefined> {
    if (!this.client) return this.memory.get(tenantId);
    return (await this.client().hget(this.key, tenantId)) ?? undefined;
  }

  async set(tenantId: string, tier: string | null): Promise<void> {
    if (!this.client) {
      if (tier === null) this.memory.delete(tenantId);
      else this.memory.set(tenantId, tier);
      return;
    }
    if (tier === null) await this.client().hdel(this.key, tenantId);
    else await this.client().hset(this.key, tenantId, tier);
  }
}
