import type { Job } from 'bullmq';
import { TenantEnvelope } from './tenant-envelope.interface';

/**
 * The job a `TenantWorkerHost.process()` receives: `data` is the payload without `_tenant`,
 * and `tenant` is the validated envelope (undefined for a system job without a tenant).
 * `updateData()` keeps the envelope in Redis.
 * @publicApi
 */
export type TenantJob<T = any, R = any, N extends string = string> = Job<T, R, N> & {
  readonly tenant?: TenantEnvelope;
  /**
   * Id of the logical run: the job id, or the run id a replay or `withRunOptions` carried. Stable
   * across retries and redeliveries; `@Idempotent` and `runIdentity(job)` key on it.
   */
  readonly runId?: string;
};

/**
 * What `TenantQueue.add` returns: enough to find the job again.
 * @publicApi
 */
export interface EnqueuedJob {
  id: string;
  name: string;
  queueName: string;
  tenantId?: string;
}
