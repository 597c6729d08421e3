import type { Job } from 'bullmq';
import { InvalidRunMarkerTableError } from './invalid-run-marker-table.error';
import { TenantJob } from '../core/types/tenant-job.interface';
import { Messages } from '../tenant-queue.messages';
import { SYSTEM_BUCKET } from '../tenant-queue.constants';
import { runIdentity } from '../core/processor/run-identity';

/**
 * A SQL client inside an open transaction: `pg`'s `PoolClient`/`Client` after `BEGIN`, a PGlite
 * `transaction()` callback's `tx`, or anything with `query(text, values)` resolving to rows.
 * @publicApi
 */
export interface RunMarkerClient {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * Options of `runOnce`, `claimRun` and `runMarkerTableSql`.
 * @publicApi
 */
export interface RunOnceOptions {
  /**
   * The run marker table (create it with `runMarkerTableSql()`).
   * @default 'tenant_job_runs'
   */
  table?: string;
}

/**
 * What `runOnce` did: `ran` false when a committed run of the same (tenant, run) did the work.
 * @publicApi
 */
export interface RunOnceResult<T> {
  ran: boolean;
  result: T | undefined;
}

const DEFAULT_TABLE = 'tenant_job_runs';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

function tableOf(options: RunOnceOptions | undefined): string {
  const table = options?.table ?? DEFAULT_TABLE;
  if (typeof table !== 'string' || !IDENTIFIER.test(table)) {
    throw new InvalidRunMarkerTableError(Messages.invalidRunMarkerTable(table));
  }
  return table;
}

/**
 * The run marker table, keyed by (tenant_id, run_id): run it once, in a migration.
 * @publicApi
 */
export function runMarkerTableSql(options?: RunOnceOptions): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${tableOf(options)} (` +
    'tenant_id text NOT NULL, run_id text NOT NULL, ' +
    'done_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant_id, run_id))'
  );
}

/**
 * Claims the job's run in the caller's open transaction: inserts its (tenant, run) marker and
 * says whether this is the first run to do so. Call it BEFORE the work, in the SAME transaction:
 * true, do the work (marker and work commit or roll back together); false, a committed run did
 * it already, so skip it. A concurrent duplicate run waits on the marker's key until this
 * transaction ends, then sees it (committed) or claims it (rolled back).
 * @publicApi
 */
export async function claimRun(
  client: RunMarkerClient,
  job: TenantJob | Job,
  options?: RunOnceOptions,
): Promise<boolean> {
  const table = tableOf(options);
  const { tenantId, runId } = runIdentity(job);
  const { rows } = await client.query(
    `INSERT INTO ${table} (tenant_id, run_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1`,
    [tenantId ?? SYSTEM_BUCKET, runId],
  );
  return rows.length === 1;
}

/**
 * `work` at most once per (tenant, run), and exactly once once a run commits: claims the run in
 * `client`'s open transaction, then runs `work`, which must write through the same transaction.
 * The caller commits (or rolls back) as usual; a repeated run (retry, stalled redelivery after
 * a crash, replay) returns `{ ran: false }` without redoing the work.
 * @publicApi
 */
export async function runOnce<T>(
  client: RunMarkerClient,
  job: TenantJob | Job,
  work: () => Promise<T>,
  options?: RunOnceOptions,
): Promise<RunOnceResult<T>> {
  if (!(await claimRun(client, job, options))) return { ran: false, result: undefined };
  return { ran: true, result: await work() };
}
