import type { BackoffOptions, JobsOptions } from 'bullmq';

/** The kernel's part of `registerQueue`'s options; features add their own (fairness, pools). */
export interface CoreQueueOptions {
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
}

/** A registered queue with its defaults filled in. */
export interface TenantQueueDefinition {
  name: string;
  tenantScoped: boolean;
  systemJobs: ReadonlySet<string>;
  defaultJobOptions: JobsOptions;
  /** BullMQ prefix (the queue's hash tag). */
  bullPrefix: string;
  /** For a dedicated pool: the queue it serves (tiers and limits are looked up under that name). */
  poolOf?: string;
  /** Dedicated pools of this queue (its own name, the shared pool, is not listed). */
  pools?: readonly string[];
  /**
   * `registerQueue`'s options as given, every feature's slice included: a feature reads its own
   * (the fair gate `fairness`, pools `pools`/`routing`) with its own type.
   */
  registered: Readonly<CoreQueueOptions>;
}
