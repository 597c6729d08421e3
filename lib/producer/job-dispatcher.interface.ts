import type { JobsOptions, Queue } from 'bullmq';

/** BullMQ job options, plus the lane of a fair queue that declares lanes. */
export type TenantJobOptions = JobsOptions & {
  /** Lane of the job on a queue with `fairness.lanes` (e.g. `'interactive'`, `'bulk'`). */
  lane?: string;
};

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
  dispatch(queue: Queue, jobs: PreparedJob[]): Promise<void>;
}

export const directDispatcher: JobDispatcher = {
  async dispatch(queue, jobs) {
    if (jobs.length === 1) {
      await queue.add(jobs[0].name, jobs[0].data, jobs[0].opts);
    } else if (jobs.length > 1) {
      await queue.addBulk(jobs);
    }
  },
};
