import type { Job } from 'bullmq';
import { jobLogRef } from '../core/context/tenant-log-fields';
import { DeadLetters } from '../dead-letters/dead-letters.service';
import { TenantQueueStateSource } from '../metrics/tenant-queue-state-source.interface';
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
  /** BullMQ's lists hold every tenant: how many of the latest were looked through for this one. */
  scanned: number | null;
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
  registry: TenantQueueRegistry,
  deadLetters: DeadLetters,
  stateSource: TenantQueueStateSource | undefined,
  queue: string,
  tenantId: string,
  state: DashboardJobState,
): Promise<DashboardJobList> {
  const bull = registry.getQueue(queue).bullQueue;
  const list = (jobs: DashboardJob[], scanned: number | null = null): DashboardJobList => ({
    queue,
    tenantId,
    state,
    jobs,
    scanned,
  });
  if (state === 'gate') {
    if (!stateSource?.handles(queue) || !stateSource.gateJobs) return list([]);
    const jobs = await stateSource.gateJobs(queue, tenantId, SHOWN);
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
        enqueuedAt: null,
        startedAt: null,
        endedAt: null,
      })),
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
        enqueuedAt: null,
        startedAt: null,
        endedAt: Date.parse(letter.failedAt),
      })),
    );
  }
  const types = state === 'waiting' ? ['waiting', 'prioritized'] : [state];
  const latest = (await bull.getJobs(types as never, 0, SCAN - 1)) as Job[];
  const mine = latest.filter((job) => job && jobLogRef(job).tenantId === tenantId);
  return list(
    mine.slice(0, SHOWN).map((job) => fromBull(job, state)),
    latest.length,
  );
}

/** One job of a queue by id, with the tenant its envelope names (null when none). */
export async function readJob(
  registry: TenantQueueRegistry,
  queue: string,
  jobId: string,
): Promise<(DashboardJob & { tenantId: string | null; bullState: string }) | undefined> {
  const bull = registry.getQueue(queue).bullQueue;
  const job = (await bull.getJob(jobId)) as Job | undefined;
  if (!job) return undefined;
  const bullState = await job.getState();
  return { ...fromBull(job, bullState), tenantId: jobLogRef(job).tenantId ?? null, bullState };
}
