import type { CoreQueueOptions } from '../core/types/queue-definition.interface';
import type { TenantFairnessOptions } from '../fairness/tenant-fairness-options.interface';
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

/**
 * Options of `TenantQueueModule.registerQueue(...)`: one queue and its defaults (the kernel's,
 * plus the fairness and pools slices).
 * @publicApi
 */
export interface RegisterTenantQueueOptions extends CoreQueueOptions {
  /**
   * Fair share across tenants for this queue (`true` for the defaults). Off when absent.
   * @default undefined
   */
  fairness?: TenantFairnessOptions | boolean;
  /**
   * A named budget shared with other fair queues: a tenant's cap (`maxConcurrency`,
   * `defaultConcurrency`, `TenantFairness.setConcurrency`) and rate limit count its jobs in every
   * queue of the budget together, so spreading work over queues does not multiply its share.
   * Needs `fairness`; the queues of one budget need the same `defaultConcurrency` and
   * `rateLimit`. Same rules as a queue name. The queue's keys (and its pools') move under the
   * budget's hash tag (`{<prefix>:~budget:<budget>}:<queue>`): drain a queue before adding it to
   * a budget, removing it, or moving it to another one.
   * @default undefined
   */
  budget?: string;
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

export type { TenantQueueDefinition } from '../core/types/queue-definition.interface';
