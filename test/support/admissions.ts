import type { Queue } from 'bullmq';
import { bullClient } from '../../lib/core/bullmq';

/**
 * When the fair gate admitted each job of `queue` (ms), read from BullMQ's own event stream: the
 * gate's admission is the job's `waiting` event from `delayed` (a job is held in BullMQ's delayed
 * set until its turn), so its stream id carries the admission time.
 */
export async function admissionTimes(queue: Queue): Promise<Map<string, number>> {
  const client = await bullClient(queue);
  const entries = (await client.xrange(queue.keys.events, '-', '+')) as [string, string[]][];
  const times = new Map<string, number>();
  for (const [id, fields] of entries) {
    const event = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) event.set(fields[i], fields[i + 1]);
    if (event.get('event') === 'waiting' && event.get('prev') === 'delayed') {
      times.set(event.get('jobId')!, Number(id.split('-')[0]));
    }
  }
  return times;
}
