import type { Job } from 'bullmq';
import { TenantJob } from '../types/tenant-job.interface';

/**
 * Who and which run: the pair an application keys its own upserts on.
 * @publicApi
 */
export interface RunIdentity {
  tenantId: string | undefined;
  runId: string;
  /** `<tenantId>/<runId>` (`-` for a job without a tenant): one string for a unique index. */
  key: string;
}

/**
 * The identity of the run a job belongs to. The run id is stable across retries, crash
 * redeliveries and dead-letter replays (and deterministic for scheduled work, whose job ids are),
 * so `INSERT ... ON CONFLICT (tenant_id, run_id) DO NOTHING` makes an effect happen once.
 * @publicApi
 */
export function runIdentity(job: TenantJob | Job): RunIdentity {
  const tenantJob = job as TenantJob;
  const runId = tenantJob.runId ?? String(job.id);
  const tenantId = tenantJob.tenant?.tenantId;
  return { tenantId, runId, key: `${tenantId ?? '-'}/${runId}` };
}
