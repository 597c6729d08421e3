import type { JobsOptions, Queue } from 'bullmq';
import { InvalidJobOptionsError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { bullClient } from '../bullmq';
import { ENVELOPE_KEY } from '../../tenant-queue.constants';

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
  // looks up the parents first (see assertParentsExist).
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
 * Refuses a call naming a parent job that does not exist, or one of another tenant, before any
 * of it is written: BullMQ's `addBulk` is a pipeline, so its own existence check (in the add
 * script) would come after the jobs before; and BullMQ links any child to any parent, so a
 * tenant's child would put its result into another tenant's job (`getChildrenValues`), hold it
 * in `waiting-children`, or fail it. A child's parent is a job of its own tenant or one without
 * a tenant; a job without a tenant (system work) may be the child of any.
 */
export async function assertParentsExist(queue: Queue, jobs: PreparedJob[]): Promise<void> {
  const parents = [...new Set(jobs.flatMap((job) => parentKeyOf(job)))];
  if (parents.length === 0) return;
  const client = await bullClient(queue);
  const data = await Promise.all(parents.map((key) => client.hget(key, 'data')));
  const tenants = new Map<string, string | undefined>();
  parents.forEach((key, i) => tenants.set(key, tenantOfData(data[i])));
  for (const job of jobs) {
    const [key] = parentKeyOf(job);
    if (key === undefined) continue;
    if (data[parents.indexOf(key)] === null) throw missingParent(queue, job.name, key);
    const owner = tenants.get(key);
    if (job.tenantId !== undefined && owner !== undefined && owner !== job.tenantId) {
      throw new InvalidJobOptionsError(
        'parent',
        Messages.invalidJobOption(
          queue.name,
          job.name,
          'parent',
          `names job "${key}" of another tenant (a job's parent must be a job of its own ` +
            `tenant, or one without a tenant)`,
        ),
      );
    }
  }
}

/** The tenant id in a job's stored `data` (its `_tenant` envelope), if any. */
function tenantOfData(json: string | null): string | undefined {
  if (json === null) return undefined;
  try {
    const tenantId = (JSON.parse(json) as Record<string, { tenantId?: unknown } | undefined>)?.[
      ENVELOPE_KEY
    ]?.tenantId;
    return typeof tenantId === 'string' ? tenantId : undefined;
  } catch {
    return undefined;
  }
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
