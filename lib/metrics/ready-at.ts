import type { Job } from 'bullmq';
import { TenantEnvelope } from '../interfaces/tenant-envelope.interface';

const OCCURRENCE = /~(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/**
 * When a job was due (ms): the occurrence of a scheduled job (its id ends `~yyyyMMddTHHmmssZ`),
 * else the later of the envelope's `enqueuedAt` and BullMQ's `timestamp + delay`.
 */
export function readyAtOf(job: Job, envelope: TenantEnvelope | undefined): number {
  const occurrence = OCCURRENCE.exec(job.id ?? '');
  if (occurrence) {
    const [, y, mo, d, h, mi, s] = occurrence;
    return Date.UTC(+y, +mo - 1, +d, +h, +mi, +s);
  }
  const enqueuedAt = envelope ? Date.parse(envelope.enqueuedAt) : job.timestamp;
  return Math.max(enqueuedAt, job.timestamp + (job.opts.delay ?? 0));
}
