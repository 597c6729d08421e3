import type { Job } from 'bullmq';

const OCCURRENCE = /~(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/**
 * When a job was due (ms), the start of its scheduling lag: the occurrence of a scheduled job
 * (its id ends `~yyyyMMddTHHmmssZ`), else BullMQ's `timestamp` plus the job's delay. A job is
 * written once, at `add()`, fair queue or not, so `timestamp` is its enqueue time and the time it
 * waited for its turn (its cap, its rate limit) is lag too. (The envelope's `enqueuedAt` says the
 * same; reading BullMQ's number spares a `Date.parse` a job.)
 */
export function readyAtOf(job: Job): number {
  const occurrence = OCCURRENCE.exec(job.id ?? '');
  if (occurrence) {
    const [, y, mo, d, h, mi, s] = occurrence;
    const at = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s);
    if (at === at) return at;
  }
  return job.timestamp + (job.opts.delay ?? 0);
}
