import type { BackoffOptions, JobsOptions } from 'bullmq';
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
 * Options of `TenantQueueModule.registerQueue(...)`: one queue and its defaults.
 * @publicApi
 */
export interface RegisterTenantQueueOptions {
  /** Queue name: letters, digits, `_`, `-`, `.`; no `:`. */
  name: string;
  /**
   * Whether jobs on this queue need a tenant. A tenant-scoped job enqueued without one throws
   * `MissingTenantError`; one that arrives without a valid envelope is cancelled, never run.
   * @default true
   */
  tenantScoped?: boolean;
  /** Job names on a tenant-scoped queue that may run without a tenant (system work). */
  systemJobs?: string[];
  /** Default BullMQ job options for this queue, merged under each call's own options. */
  defaultJobOptions?: JobsOptions;
  /**
   * Attempts per job (first run included) unless `defaultJobOptions` or the job's own options
   * say otherwise. After the last one the job goes to its tenant's dead letters.
   * @default 3
   */
  attempts?: number;
  /**
   * Delay between attempts, unless `defaultJobOptions` or the job's own options say otherwise.
   * `jitter` (0-1) spreads retries so a failing tenant does not retry in lock-step.
   * @default { type: 'exponential', delay: 1000, jitter: 0.5 }
   */
  backoff?: BackoffOptions;
  /**
   * Most dead letters kept per tenant on this queue; the oldest are dropped beyond it.
   * @default 1000
   */
  deadLetterCap?: number;
  /**
   * Fair share across tenants for this queue (`true` for the defaults). Off when absent.
   * @default undefined
   */
  fairness?: TenantFairnessOptions | boolean;
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

/** A registered queue with its defaults filled in. */
export interface TenantQueueDefinition {
  name: string;
  tenantScoped: boolean;
  systemJobs: ReadonlySet<string>;
  defaultJobOptions: JobsOptions;
  /** BullMQ prefix (the queue's hash tag). */
  bullPrefix: string;
  /** Most dead letters kept per tenant (default 1000). */
  deadLetterCap?: number;
  /** For a dedicated pool: the queue it serves (tiers and limits are looked up under that name). */
  poolOf?: string;
  /** Fairness options as registered (validated at bootstrap by the fair gate). */
  fairness?: TenantFairnessOptions | boolean;
  /** Dedicated pools of this queue (its own name, the shared pool, is not listed). */
  pools?: readonly string[];
}
