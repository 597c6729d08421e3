import type { CoreQueueOptions } from '../core/types/queue-definition.interface';
import type { TenantProfile } from '../core/tenants/tenant-tiers.service';

/**
 * What a routing function knows about the tenant: its id, tier and directory record.
 * @publicApi
 */
export type TenantRoute = TenantProfile;

/**
 * Which pool takes a tenant's jobs: a static map `{ [tenantId]: pool }`, or a function of the
 * tenant (return `undefined` to fall through to the tier's and record's `pools`, then the shared
 * pool). Returning the queue's own name picks the shared pool.
 * @publicApi
 */
export type TenantPoolRouting =
  | Record<string, string>
  | ((tenant: TenantRoute) => string | undefined | Promise<string | undefined>);

/** The pools slice of `registerQueue`'s options. */
export interface PoolQueueOptions {
  /**
   * Dedicated pools of this queue: each is its own BullMQ queue (named by the pool, same rules
   * as a queue name) with this queue's options and its own fair gate, so a heavy tenant can run
   * on its own workers. The queue's own name is the shared pool. Pools named by `routing`'s map
   * and by the tiers' `pools` are declared too.
   * @default []
   */
  pools?: string[];
  /**
   * Routes a tenant's jobs to a pool at enqueue time, before the tier's and the tenant record's
   * `pools`; a tenant nobody routes uses the shared pool. Producers do not change.
   * @default undefined
   */
  routing?: TenantPoolRouting;
}

/** A queue's options as the pools feature reads them. */
export type PooledQueueOptions = CoreQueueOptions & PoolQueueOptions;
