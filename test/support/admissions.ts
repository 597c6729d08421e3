import { Job, type Queue } from 'bullmq';
import type { TenantFairness } from '../../lib';
import { bullClient } from '../../lib/core/bullmq';
import { waitFor } from './wait';

/**
 * When the fair gate admitted each job of `queue` (ms), read from BullMQ's own event stream: the
 * gate's admission is the job's `waiting` event from `delayed` (a job is held in BullMQ's delayed
 * set until its turn), so its stream id carries the admission time.
 */
export async function admissionTimes(queue: Queue): Promise<Map<string, number>> {
  const times = new Map<string, number>();
  for (const [jobId, at] of await admissions(queue)) times.set(jobId, at);
  return times;
}

/** The ids of `queue`'s jobs in the order the fair gate admitted them (see `admissionTimes`). */
export async function admissionOrder(queue: Queue): Promise<string[]> {
  return (await admissions(queue)).map(([jobId]) => jobId);
}

/** [job id, admission time] of each admitted job, in admission order. */
async function admissions(queue: Queue): Promise<[string, number][]> {
  const client = await bullClient(queue);
  const entries = (await client.xrange(queue.keys.events, '-', '+')) as [string, string[]][];
  const admitted: [string, number][] = [];
  for (const [id, fields] of entries) {
    const event = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) event.set(fields[i], fields[i + 1]);
    if (event.get('event') === 'waiting' && event.get('prev') === 'delayed') {
      admitted.push([event.get('jobId')!, Number(id.split('-')[0])]);
    }
  }
  return admitted;
}

/** Resolves once the fair gate of `queue` holds nothing for these tenants: none in flight or queued. */
export async function gateDrained(
  fairness: TenantFairness,
  queue: string,
  tenants: string[],
  ms?: number,
): Promise<void> {
  await waitFor(
    async () => {
      const states = await Promise.all(tenants.map((t) => fairness.getTenant(queue, t)));
      return states.every((state) => state.inFlight === 0 && state.backlog === 0);
    },
    `nothing in flight or queued for ${tenants.join(', ')} on ${queue}`,
    ms,
  );
}

/** BullMQ's own view of a job: `Job.fromId` + `getState`, 'absent' when BullMQ has no such job. */
export async function stateOf(queue: Queue, id: string): Promise<string> {
  const job = await Job.fromId(queue, id);
  return job ? job.getState() : 'absent';
}
