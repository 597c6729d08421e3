import type { Job } from 'bullmq';
import { TenantEnvelope } from '../core/types/tenant-envelope.interface';

const OCCURRENCE = /~(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/**
 * When a job was due (ms), the start of its scheduling lag: the occurrence of a scheduled job
 * (its id ends `~yyyyMMddTHHmmssZ`), else the envelope's `enqueuedAt` plus the job's delay.
 * Not BullMQ's `timestamp`: on a fair queue that is when the gate admitted the job, and the
 * time it waited in the gate (its turn, its cap, its rate limit) is lag too. A job without a
 * readable envelope instant falls back to `timestamp`.
 */
export function readyAtOf(job: Job, envelope: TenantEnvelope | undefined): number {
  const occurrence = OCCURRENCE.exec(job.id ?? '');
  if (occurrence) {
    const [, y, mo, d, h, mi, s] = occurrence;
    const at = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s);
    if (at === at) return at;
  }
  const enqueuedAt = envelope ? Date.parse(envelope.enqueuedAt) : NaN;
  // NaN never equals itself: an impossible instant that passed the envelope's pattern.
  const from = enqueuedAt === enqueuedAt ? enqueuedAt : job.timestamp;
  return from + (job.opts.delay ?? 0);
}
