import type { Job } from 'bullmq';
import { TenantQueueInspector, TenantQueueStateSource } from '../metrics';
import { DeadLetters } from '../dead-letters';
import { RUN_OPTIONS_KEY } from '../core/envelope/job-run-options';
import { ENVELOPE_KEY } from '../tenant-queue.constants';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';

/** The job lists of the dashboard's tenant view. */
export const JOB_STATES = [
  'gate',
  'waiting',
  'active',
  'delayed',
  'failed',
  'dead-letters',
] as const;
export type DashboardJobState = (typeof JOB_STATES)[number];

/** One job as the dashboard lists it (payload and options as JSON text, trimmed). */
export interface DashboardJob {
  id: string;
  name: string;
  /** The list it was read from, or BullMQ's state for a job looked up by id. */
  state: string;
  attempts: number;
  payload: string;
  options: string;
  reason: string | null;
  stack: string | null;
  /** When it was enqueued, started, ended (ms), where known. */
  enqueuedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
}

export interface DashboardJobList {
  queue: string;
  tenantId: string;
  state: DashboardJobState;
  jobs: DashboardJob[];
  /** How many the tenant has in this list, where known (the gate, dead letters). */
  total: number | null;
  /** BullMQ's lists hold every tenant: how many of the latest were looked through for this one. */
  scanned: number | null;
  /** How many jobs of every tenant BullMQ holds in this state (null for gate and dead letters). */
  stateTotal: number | null;
}

const SHOWN = 50;
/** Latest jobs of a BullMQ state read to find one tenant's (a bounded read per click). */
const SCAN = 500;
const TEXT_LIMIT = 4000;

/** JSON text of a value, cut at `TEXT_LIMIT` characters. */
function text(value: unknown): string {
  const json = JSON.stringify(value ?? null) ?? 'null';
  return json.length > TEXT_LIMIT ? `${json.slice(0, TEXT_LIMIT)}…` : json;
}

/** When the envelope says the job was enqueued (ms), null without one. */
function enqueuedAtOf(data: unknown): number | null {
  const envelope = (data as Record<string, unknown> | null)?.[ENVELOPE_KEY] as
    { enqueuedAt?: unknown } | undefined;
  const at = typeof envelope?.enqueuedAt === 'string' ? Date.parse(envelope.enqueuedAt) : NaN;
  return Number.isNaN(at) ? null : at;
}

const instant = (iso: string | undefined): number | null => (iso ? Date.parse(iso) : null);

/** The payload without the module's own fields (the envelope and run options). */
function payloadOf(data: unknown): unknown {
  if (!data || typeof data !== 'object') return data;
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, value] of Object.entries(data)) {
    if (key !== ENVELOPE_KEY && key !== RUN_OPTIONS_KEY) out[key] = value;
  }
  return out;
}

function fromBull(job: Job, state: string): DashboardJob {
  return {
    id: String(job.id),
    name: job.name,
    state,
    attempts: job.attemptsMade,
    payload: text(payloadOf(job.data)),
    options: text(job.opts),
    reason: job.failedReason || null,
    stack: job.stacktrace?.length ? job.stacktrace.join('\n') : null,
    enqueuedAt: job.timestamp ?? null,
    startedAt: job.processedOn ?? null,
    endedAt: job.finishedOn ?? null,
  };
}

/** Lists one tenant's jobs on one queue in one state: bounded reads, nothing written. */
export async function listTenantJobs(
  inspector: TenantQueueInspector,
  registry: TenantQueueRegistry,
  deadLetters: DeadLetters,
  stateSource: TenantQueueStateSource | undefined,
  queue: string,
  tenantId: string,
  state: DashboardJobState,
): Promise<DashboardJobList> {
  const bull = registry.getQueue(queue).bullQueue;
  const list = (
    jobs: DashboardJob[],
    total: number | null,
    scanned: number | null = null,
    stateTotal: number | null = null,
  ): DashboardJobList => ({ queue, tenantId, state, jobs, total, scanned, stateTotal });
  if (state === 'gate') {
    if (!stateSource?.handles(queue) || !stateSource.gateJobs) return list([], 0);
    const [jobs, live] = await Promise.all([
      stateSource.gateJobs(queue, tenantId, SHOWN),
      stateSource.getTenant(queue, tenantId),
    ]);
    return list(
      jobs.map((job) => ({
        id: job.id,
        name: job.name,
        state,
        attempts: 0,
        payload: text(payloadOf(job.data)),
        options: text(job.opts),
        reason: null,
        stack: null,
        enqueuedAt: enqueuedAtOf(job.data),
        startedAt: null,
        endedAt: null,
      })),
      live.gated ?? null,
    );
  }
  if (state === 'dead-letters') {
    const page = await deadLetters.list(tenantId, { queue, limit: SHOWN });
    return list(
      page.items.map((letter) => ({
        id: letter.jobId,
        name: letter.name,
        state,
        attempts: letter.attempts,
        payload: text(letter.data),
        options: text(letter.opts),
        reason: `${letter.reason}: ${letter.failedReason}`,
        stack: letter.stack ?? null,
        enqueuedAt: instant(letter.envelope?.enqueuedAt),
        startedAt: instant(letter.startedAt),
        endedAt: Date.parse(letter.failedAt),
      })),
      page.total,
    );
  }
  const types = state === 'waiting' ? ['waiting', 'prioritized'] : [state];
  const [latest, counts] = await Promise.all([
    bull.getJobs(types as never, 0, SCAN - 1) as Promise<Job[]>,
    bull.getJobCounts(...(types as never[])),
  ]);
  const mine = latest.filter((job) => job && inspector.tenantOfJob(job) === tenantId);
  const all = Object.values(counts).reduce((sum, n) => sum + n, 0);
  return list(
    mine.slice(0, SHOWN).map((job) => fromBull(job, state)),
    // Every job of the state was read: the tenant's count is exact.
    latest.length >= all ? mine.length : null,
    latest.length,
    all,
  );
}

/** One job of a queue by id, with the tenant its envelope names (null when none). */
export async function readJob(
  inspector: TenantQueueInspector,
  registry: TenantQueueRegistry,
  queue: string,
  jobId: string,
): Promise<(DashboardJob & { tenantId: string | null; bullState: string }) | undefined> {
  const bull = registry.getQueue(queue).bullQueue;
  // State first: once it is final, the job read after it carries the matching outcome (its result
  // or reason, its end time): BullMQ writes both in one script.
  let bullState: string = await bull.getJobState(jobId);
  const job = (await bull.getJob(jobId)) as Job | undefined;
  if (!job) return undefined;
  // Added between the two reads.
  if (bullState === 'unknown') bullState = await job.getState();
  return { ...fromBull(job, bullState), tenantId: inspector.tenantOfJob(job) ?? null, bullState };
}
