import type { Job } from 'bullmq';
import { TenantJob } from '../types/tenant-job.interface';
import { SYSTEM_BUCKET } from '../../tenant-queue.constants';

const escape = (char: string) => (char === '%' ? '%25' : '%2F');

/**
 * Who and which run: the pair an application keys its own upserts on.
 * @publicApi
 */
export interface RunIdentity {
  tenantId: string | undefined;
  runId: string;
  /**
   * `<tenantId>/<runId>`: one string for a unique index. `%` and `/` in the tenant id are
   * escaped (`%25`, `%2F`), so no two (tenant, run) pairs share a key; a job without a tenant has
   * `~system~…` (65 characters, longer than any tenant id) in the tenant's place.
   */
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
  const tenantPart = tenantId === undefined ? SYSTEM_BUCKET : tenantId.replace(/[%/]/g, escape);
  return { tenantId, runId, key: `${tenantPart}/${runId}` };
}
