import type { Job } from 'bullmq';
import { TenantEnvelopeCodec } from '../core/envelope/tenant-envelope.codec';
import { finalFailureReason } from '../core/processor/job-error.mapper';
import { TenantJob } from '../core/types/tenant-job.interface';
import {
  JobRunOptions,
  RUN_OPTIONS_KEY,
  runOptionsOf,
  runOptionsProblem,
} from '../core/envelope/job-run-options';
import { ENVELOPE_KEY } from '../tenant-queue.constants';
import { TRACEPARENT } from '../core/envelope/tenant-envelope.dto';
import { DeadLetter } from './dead-letter.interface';

/**
 * @internal Builds the dead letter of a job that failed for good, from the job as the worker
 * holds it (payload already opened) or as read back from Redis. Undefined for a job without a
 * valid tenant envelope (system work is not dead-lettered).
 */
export function deadLetterOf(
  job: Job,
  codec: TenantEnvelopeCodec,
  error?: Error,
): DeadLetter | undefined {
  const {
    [ENVELOPE_KEY]: _envelope,
    [RUN_OPTIONS_KEY]: rawRun,
    ...data
  } = (job.data ?? {}) as Record<string, unknown>;
  const envelope = codec.envelopeOf(job);
  if (!envelope || job.id === undefined) return undefined;
  const run: JobRunOptions =
    rawRun !== undefined && !runOptionsProblem(rawRun)
      ? (rawRun as JobRunOptions)
      : runOptionsOf(job);
  const failedReason = bounded(job.failedReason ?? error?.message ?? 'unknown failure');
  const stack = job.stacktrace?.[job.stacktrace.length - 1] ?? error?.stack;
  return {
    jobId: job.id,
    queue: job.queueName,
    name: job.name,
    tenantId: envelope.tenantId,
    runId: run.runId ?? (job as TenantJob).runId ?? job.id,
    reason: finalFailureReason(job, error),
    failedReason,
    stack: stack ? bounded(stack) : undefined,
    attempts: job.attemptsMade,
    failedAt: new Date(job.finishedOn ?? Date.now()).toISOString(),
    startedAt: job.processedOn ? new Date(job.processedOn).toISOString() : undefined,
    envelope,
    data,
    opts: {
      attempts: job.opts.attempts,
      backoff: job.opts.backoff,
      priority: job.opts.priority,
      lane: (job.opts as { lane?: string }).lane,
    },
    timeoutMs: run.timeoutMs,
    traceparent: traceparentOf(job) ?? envelope.traceparent,
    replays: run.replay ?? 0,
  };
}

/**
 * The characters of a failure's text a letter keeps: `deadLetterCap` bounds a tenant's letters by
 * count, so a letter must be bounded in size too (BullMQ's failed job keeps the whole text).
 */
const DEAD_LETTER_TEXT_LIMIT = 16_384;

function bounded(text: string): string {
  if (text.length <= DEAD_LETTER_TEXT_LIMIT) return text;
  const more = text.length - DEAD_LETTER_TEXT_LIMIT;
  return `${text.slice(0, DEAD_LETTER_TEXT_LIMIT)}… [${more} more characters]`;
}

/** The traceparent of the context BullMQ's telemetry carried for the job (`opts.telemetry`). */
function traceparentOf(job: Job): string | undefined {
  const metadata = (job.opts as { telemetry?: { metadata?: unknown } }).telemetry?.metadata;
  if (typeof metadata !== 'string') return undefined;
  try {
    const traceparent = (JSON.parse(metadata) as { traceparent?: unknown } | null)?.traceparent;
    return typeof traceparent === 'string' && TRACEPARENT.test(traceparent)
      ? traceparent
      : undefined;
  } catch {
    return undefined;
  }
}
