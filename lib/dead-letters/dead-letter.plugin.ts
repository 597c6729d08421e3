import { Injectable, Logger } from '@nestjs/common';
import type { Job, Worker } from 'bullmq';
import { parseCancelReason } from '../errors';
import { TenantQueueDefinition } from '../interfaces/register-queue-options.interface';
import { TenantJobPipeline, WorkerPlugin } from '../processor/tenant-job-pipeline';
import { TenantProcessorOptions } from '../processor/tenant-processor.decorator';
import { TenantQueueRegistry } from '../tenant-queue.registry';
import { DeadLetters } from './dead-letters.service';
import { DeadLettersScript } from './dead-letters.script';
import { jobLogRef, tenantLogFields } from '../context/tenant-log-fields';

const SWEEP_INTERVAL_MS = 30_000;
/** How far back each sweep looks past the last one, for failures written by skewed clocks. */
const SWEEP_OVERLAP_MS = 60_000;
const SWEEP_PAGE = 200;

/**
 * Moves each job that fails for good (attempts exhausted, non-retryable, stalled too often) to
 * its tenant's dead letters. Cancelled jobs (`[cancelled:...]`) are a distinct outcome and stay
 * out. BullMQ's failed set is the source of truth: besides the `failed` event, every worker
 * sweeps recent failures at start and every 30 s, so a process that died between "failed" and
 * "dead-lettered" loses nothing. Recording is idempotent, keyed by job id and failure time.
 */
@Injectable()
export class DeadLetterWorkerPlugin implements WorkerPlugin {
  private readonly logger = new Logger('TenantQueue');

  constructor(
    pipeline: TenantJobPipeline,
    private readonly deadLetters: DeadLetters,
    private readonly registry: TenantQueueRegistry,
  ) {
    pipeline.useWorkerPlugin(this);
  }

  attach(worker: Worker, definition: TenantQueueDefinition, _options: TenantProcessorOptions) {
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
    let sweeping: Promise<void> | undefined;
    const sweep = () => {
      sweeping ??= this.sweep(definition)
        .then(() => undefined)
        .catch((e: Error) =>
          this.logger.error(
            `${tenantLogFields()} dead-letter sweep of ${definition.name}: ${e.message}`,
          ),
        )
        .finally(() => (sweeping = undefined));
    };
    const start = setTimeout(sweep, 0);
    const every = setInterval(sweep, SWEEP_INTERVAL_MS);
    every.unref();
    worker.on('closing', () => {
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
        const job = (await queue.getJob(ids[i])) as Job | undefined;
        if (!job || parseCancelReason(job.failedReason)) continue;
        if (await this.deadLetters.record(definition, job, false)) recorded++;
      }
      if (ids.length < SWEEP_PAGE) break;
    }
    await redis.set(sweptKey, String(newest));
    return recorded;
  }
}
