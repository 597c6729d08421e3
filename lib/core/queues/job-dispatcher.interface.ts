import type { JobsOptions, Queue } from 'bullmq';
import { InvalidJobOptionsError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { bullClient } from '../bullmq';

/** BullMQ's `ErrorCode.ParentJobNotExist`: its add script found no parent job. */
const PARENT_MISSING = -5;

/**
 * BullMQ job options, plus what the features add (a fair queue's `lane` and `fairKey`).
 * @publicApi
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- features add their fields
export interface TenantJobOptions extends JobsOptions {}

/** A job ready for Redis: envelope attached, id assigned, options merged. */
export interface PreparedJob {
  name: string;
  data: Record<string, unknown>;
  opts: JobsOptions & { jobId: string };
  tenantId?: string;
}

/**
 * Moves prepared jobs into BullMQ. The default writes straight to the queue; the fair gate
 * replaces it for queues with fairness on.
 */
export interface JobDispatcher {
  /**
   * The dispatcher's own checks of a call, run by the producer for every job of the call (every
   * pool's share of it, on a queue with pools) before the first write; throws a typed error to
   * refuse the whole call. Optional: the producer has checked payloads, options, tenants and
   * lanes already.
   */
  validate?(jobs: PreparedJob[]): void | Promise<void>;
  /** Writes the jobs. Called only after every `validate` of the call passed. */
  dispatch(queue: Queue, jobs: PreparedJob[]): Promise<void>;
}

export const directDispatcher: JobDispatcher = {
  // Nothing of its own: BullMQ's checks ran at prepare (see job-options.check), and the producer
  // looks up the parents of a bulk first (see assertParentsExist).
  validate() {},
  async dispatch(queue, jobs) {
    try {
      if (jobs.length === 1) {
        keepBullId(jobs[0], (await queue.add(jobs[0].name, jobs[0].data, jobs[0].opts)).id);
      } else if (jobs.length > 1) {
        const added = await queue.addBulk(jobs);
        for (let i = 0; i < jobs.length; i++) keepBullId(jobs[i], added[i].id);
      }
    } catch (error) {
      if ((error as { code?: unknown }).code !== PARENT_MISSING) throw error;
      throw missingParent(queue, jobs[0].name, parentKeyOf(jobs[0])[0] ?? '?');
    }
  },
};

/**
 * BullMQ answers an add it deduplicated with the id of the job that holds the deduplication id:
 * that is the id the caller gets back, never one no job has.
 */
function keepBullId(job: PreparedJob, id: string | undefined): void {
  if (id !== undefined && id !== job.opts.jobId) job.opts.jobId = id;
}

/**
 * Refuses a bulk naming a parent job that does not exist, before any of it is written: BullMQ's
 * `addBulk` is a pipeline, so its own check (in the add script) would come after the jobs before.
 */
export async function assertParentsExist(queue: Queue, jobs: PreparedJob[]): Promise<void> {
  if (jobs.length < 2) return;
  const parents = [...new Set(jobs.flatMap((job) => parentKeyOf(job)))];
  if (parents.length === 0) return;
  const client = await bullClient(queue);
  const found = await Promise.all(parents.map((key) => client.hexists(key, 'name')));
  const missing = parents.find((_key, i) => !found[i]);
  const job = jobs.find((j) => parentKeyOf(j)[0] === missing);
  if (missing !== undefined) throw missingParent(queue, job!.name, missing);
}

function parentKeyOf(job: PreparedJob): string[] {
  const parent = job.opts.parent;
  return parent ? [`${parent.queue}:${parent.id}`] : [];
}

function missingParent(queue: Queue, name: string, key: string): InvalidJobOptionsError {
  return new InvalidJobOptionsError(
    'parent',
    Messages.invalidJobOption(
      queue.name,
      name,
      'parent',
      `names job "${key}", which does not exist (add the parent first)`,
    ),
  );
}
