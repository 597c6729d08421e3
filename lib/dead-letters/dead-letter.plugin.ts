import { Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { parseCancelReason } from '../core/errors';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { WorkerEvents, WorkerPlugin } from '../core/processor/tenant-job-pipeline';
import { TenantWorkerPlugin } from '../core/processor/tenant-worker-plugin.decorator';
import { TenantProcessorOptions } from '../core/processor/tenant-processor.decorator';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { DeadLetters } from './dead-letters.service';
import { DeadLettersScript } from './dead-letters.script';
import { Messages } from '../tenant-queue.messages';
import { jobLogRef, tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';

const SWEEP_INTERVAL_MS = 30_000;
/** How far back each sweep looks past the last one, for failures written by skewed clocks. */
const SWEEP_OVERLAP_MS = 60_000;
const SWEEP_PAGE = 200;
/** Unreadable job ids remembered per process so each is logged once (then the set starts over). */
const UNREADABLE_MEMORY = 10_000;

/**
 * Moves each job that fails for good (attempts exhausted, non-retryable, stalled too often) to
 * its tenant's dead letters. Cancelled jobs (`[cancelled:...]`) are a distinct outcome and stay
 * out. BullMQ's failed set is the source of truth: besides the `failed` event, every worker
 * sweeps recent failures at start and every 30 s, so a process that died between "failed" and
 * "dead-lettered" loses nothing while BullMQ keeps the failed job (not with `removeOnFail: true`,
 * which deletes it as it fails: docs/containment.md says so). Recording is idempotent, keyed by job id and failure time. A
 * failed job whose hash cannot be read back (corrupt data or options) is skipped, logged once and
 * counted (`unreadable`); the sweep goes on with the rest. A dead letter whose job completes by
 * another path (BullMQ's `job.retry()`, bull-board's Retry, then this or any worker) is resolved
 * on this worker's `completed` event or by the next sweep, while BullMQ still keeps the job.
 */
@Injectable()
@TenantWorkerPlugin(40)
export class DeadLetterWorkerPlugin implements WorkerPlugin {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  private readonly unreadableIds = new Set<string>();
  private readonly unreadableCounts = new Map<string, number>();

  constructor(
    private readonly deadLetters: DeadLetters,
    private readonly registry: TenantQueueRegistry,
  ) {}

  attach(
    worker: WorkerEvents,
    definition: TenantQueueDefinition,
    _options: TenantProcessorOptions,
  ) {
    worker.on('failed', (job, error) => {
      if (!job || job.finishedOn === undefined || parseCancelReason(job.failedReason)) return;
      this.deadLetters
        .record(definition, job, true, error)
        .catch((e: Error) =>
          this.logger.error(
            `${tenantLogFields(jobLogRef(job))} dead letter of job ${job.id}: ${e.message}`,
          ),
        );
    });
    // A job that failed an attempt before (a dead letter's job retried by job.retry() or
    // bull-board has its stack kept, or more attempts made than allowed) and now completed may
    // resolve a letter; other completions cost this check only.
    worker.on('completed', (job) => {
      if (
        !job?.id ||
        !((job.stacktrace?.length ?? 0) > 0 || job.attemptsMade > (job.opts.attempts ?? 1))
      )
        return;
      this.deadLetters
        .resolveJob(definition, job.id, true)
        .catch((e: Error) =>
          this.logger.error(
            `${tenantLogFields(jobLogRef(job))} resolving the dead letter of job ${job.id}: ${e.message}`,
          ),
        );
    });
    let sweeping: Promise<void> | undefined;
    let closing = false;
    const sweep = () => {
      sweeping ??= this.sweep(definition)
        .then(() => this.deadLetters.resolveOpen(definition))
        .then(() => undefined)
        .catch((e: Error) => {
          // A sweep the shutdown cut short (its connection closed) is no error to report.
          if (!closing) {
            this.logger.error(
              `${tenantLogFields()} dead-letter sweep of ${definition.name}: ${e.message}`,
            );
          }
        })
        .finally(() => (sweeping = undefined));
    };
    const start = setTimeout(sweep, 0);
    const every = setInterval(sweep, SWEEP_INTERVAL_MS);
    every.unref();
    worker.on('closing', () => {
      closing = true;
      clearTimeout(start);
      clearInterval(every);
    });
  }

  /** Dead-letters recent final failures that no process recorded yet. */
  async sweep(definition: TenantQueueDefinition): Promise<number> {
    const redis = this.deadLetters.script.raw;
    const sweptKey = DeadLettersScript.sweptKey(definition);
    const since = Math.max(0, Number((await redis.get(sweptKey)) ?? 0) - SWEEP_OVERLAP_MS);
    const queue = this.registry.getQueue(definition.name).bullQueue;
    let recorded = 0;
    let newest = since;
    for (let offset = 0; ; offset += SWEEP_PAGE) {
      const flat: string[] = await redis.zrangebyscore(
        DeadLettersScript.failedKey(definition),
        since,
        '+inf',
        'WITHSCORES',
        'LIMIT',
        offset,
        SWEEP_PAGE,
      );
      const ids = flat.filter((_, i) => i % 2 === 0);
      const marks: [Error | null, string | null][] = await ids
        .reduce(
          (pipe, id) => pipe.hget(DeadLettersScript.jobKey(definition, id), 'tqDlq'),
          redis.pipeline(),
        )
        .exec();
      for (let i = 0; i < ids.length; i++) {
        const score = Number(flat[i * 2 + 1]);
        newest = Math.max(newest, score);
        if (marks[i][1] === String(score)) continue;
        try {
          const job = (await queue.getJob(ids[i])) as Job | undefined;
          if (!job || parseCancelReason(job.failedReason)) continue;
          if (await this.deadLetters.record(definition, job, false)) recorded++;
        } catch (error) {
          if (!isUnreadable(error)) throw error;
          this.skipUnreadable(definition, ids[i], error as Error);
        }
      }
      if (ids.length < SWEEP_PAGE) break;
    }
    await redis.set(sweptKey, String(newest));
    return recorded;
  }

  /** Failed jobs of `queue` the sweep could not read (distinct ids, this process). */
  unreadable(queue: string): number {
    return this.unreadableCounts.get(queue) ?? 0;
  }

  private skipUnreadable(definition: TenantQueueDefinition, jobId: string, error: Error): void {
    const id = `${definition.name}\n${jobId}`;
    if (this.unreadableIds.has(id)) return;
    if (this.unreadableIds.size >= UNREADABLE_MEMORY) this.unreadableIds.clear();
    this.unreadableIds.add(id);
    this.unreadableCounts.set(definition.name, this.unreadable(definition.name) + 1);
    this.logger.warn(
      `${tenantLogFields({ jobId })} ${Messages.deadLetterUnreadable(definition.name, jobId, error.message)}`,
    );
  }
}

/** Errors of reading a job back (its JSON, or a shape the dead letter cannot be built from). */
function isUnreadable(error: unknown): boolean {
  return error instanceof SyntaxError || error instanceof TypeError || error instanceof RangeError;
}
