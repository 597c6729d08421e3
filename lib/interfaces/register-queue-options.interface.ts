import type { JobsOptions } from 'bullmq';
import type { TenantFairnessOptions } from '../fairness/tenant-fairness-options.interface';

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
   * Fair share across tenants for this queue (`true` for the defaults). Off when absent.
   * @default undefined
   */
  fairness?: TenantFairnessOptions | boolean;
}

/** A registered queue with its defaults filled in. */
export interface TenantQueueDefinition {
  name: string;
  tenantScoped: boolean;
  systemJobs: ReadonlySet<string>;
  defaultJobOptions: JobsOptions;
  /** BullMQ prefix (the queue's hash tag). */
  bullPrefix: string;
  /** Fairness options as registered (validated at bootstrap by the fair gate). */
  fairness?: TenantFairnessOptions | boolean;
}
