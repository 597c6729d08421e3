import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import type { Job, Worker } from 'bullmq';
import { ClsService } from 'nestjs-cls';
import { TENANT_JOB_ID, jobLogRef, tenantLogFields } from '../context/tenant-log-fields';
import { TIMEOUT_REASON_PREFIX, parseCancelReason } from '../errors';
import { TenantQueueDefinition } from '../interfaces/register-queue-options.interface';
import { TenantJob } from '../interfaces/tenant-job.interface';
import {
  JobRunContext,
  JobStage,
  TenantJobPipeline,
  WorkerPlugin,
} from '../processor/tenant-job-pipeline';
import { PreparedJob } from '../producer/job-dispatcher.interface';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../tenant-queue.options';
import { TenantQueueRedis } from '../tenant-queue.redis';
import { LAG_BUCKETS_MS, bucketOf } from './lag-buckets';

import { JobResult, MetricsSink } from './metrics-sink.interface';
import {
  ResolvedMetricsOptions,
  TENANT_QUEUE_METRICS_OPTIONS,
  TenantLabeler,
} from './metrics.options';
import { readyAtOf } from './ready-at';
import { VisibilityBatch } from './visibility-batch';
import { NO_TENANT, VisibilityKeys } from './visibility-keys';

const BUCKET_FIELDS = Array.from({ length: LAG_BUCKETS_MS.length + 1 }, (_, i) => `b${i}`);

/**
 * @internal Records every job's lag, run time and result: into the metrics sink at once, and
 * into an in-process batch that is flushed to Redis every `flushIntervalMs` (pipelined, one
 * round trip per active queue), so the job path itself never waits on Redis.
 */
@Injectable()
export class TenantMetricsRecorder
  implements JobStage, WorkerPlugin, OnApplicationBootstrap, BeforeApplicationShutdown
{
  readonly order = 5;
  private readonly logger = new Logger('TenantQueue');
  private readonly labeler: TenantLabeler;
  private readonly batches = new Map<string, VisibilityBatch>();
  private readonly workers = new Set<Worker>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private flushAgain: Promise<void> | undefined;

  constructor(
    pipeline: TenantJobPipeline,
    private readonly cls: ClsService,
    private readonly redis: TenantQueueRedis,
    @Inject(TENANT_QUEUE_OPTIONS) private readonly rootOptions: ResolvedTenantQueueOptions,
    @Inject(TENANT_QUEUE_METRICS_OPTIONS) private readonly options: ResolvedMetricsOptions,
    @Inject(MetricsSink) private readonly sink: MetricsSink,
  ) {
    this.labeler = new TenantLabeler(options);
    pipeline.useStage(this);
    pipeline.useWorkerPlugin(this);
    pipeline.useEnqueueObserver((definition, jobs) => this.enqueued(definition, jobs));
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left, after this module's workers have closed. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([...this.workers].map((worker) => worker.close().catch(() => undefined)));
    await this.flush();
  }

  /**
   * Writes the batches of every queue to Redis now: when it resolves, everything recorded before
   * the call is in Redis. A flush already running took its batches before this call, so the call
   * runs one more after it (callers that arrive meanwhile share that one).
   */
  flush(): Promise<void> {
    if (!this.flushing) {
      this.flushing = this.writeAll().finally(() => (this.flushing = undefined));
      return this.flushing;
    }
    this.flushAgain ??= this.flushing.then(() => {
      this.flushAgain = undefined;
      return this.flush();
    });
    return this.flushAgain;
  }

  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown> {
    const { job, definition, envelope } = context;
    const startedAt = Date.now();
    const tenantId = envelope?.tenantId;
    const tenant = tenantId ?? NO_TENANT;
    const label = this.labeler.label(tenantId);
    this.cls.set(TENANT_JOB_ID, job.id);
    if (job.attemptsMade === 0 && (job.attemptsStarted ?? 1) <= 1 && job.id !== undefined) {
      const lagMs = Math.max(0, startedAt - readyAtOf(job, envelope));
      const batch = this.batchOf(definition);
      batch.started(job.id, tenant, startedAt);
      batch.count(tenant, startedAt, BUCKET_FIELDS[bucketOf(lagMs)]);
      this.sink.observeLag(definition.name, label, lagMs / 1000);
    }
    const ran = () =>
      this.sink.observeRunTime(definition.name, label, (Date.now() - startedAt) / 1000);
    let running: Promise<unknown>;
    try {
      running = next();
    } catch (error) {
      ran();
      throw error;
    }
    running.then(ran, ran);
    return running;
  }

  attach(worker: Worker, definition: TenantQueueDefinition): void {
    this.workers.add(worker);
    worker.on('closed', () => this.workers.delete(worker));
    worker.on('completed', (job) => this.outcome(definition, job, 'completed', ''));
    worker.on('failed', (job) => {
      if (!job) return;
      const cancel = parseCancelReason(job.failedReason);
      const final = job.finishedOn !== undefined;
      if (cancel) this.outcome(definition, job, 'cancelled', cancel);
      else if (final) this.outcome(definition, job, 'dead_lettered', finalReason(job));
      else if (job.failedReason?.startsWith(TIMEOUT_REASON_PREFIX.trim())) {
        this.outcome(definition, job, 'timed_out', '');
      } else this.outcome(definition, job, 'failed', '');
    });
  }

  private outcome(definition: TenantQueueDefinition, job: Job, result: JobResult, reason: string) {
    const tenantId = this.tenantOf(job);
    const now = Date.now();
    const batch = this.batchOf(definition);
    const tenant = tenantId ?? NO_TENANT;
    batch.count(tenant, now, result);
    if (result !== 'failed' && result !== 'timed_out') batch.finished(tenant, now);
    this.sink.countResult(definition.name, this.labeler.label(tenantId), result, reason);
  }

  private enqueued(definition: TenantQueueDefinition, jobs: PreparedJob[]): void {
    const batch = this.batchOf(definition);
    const now = Date.now();
    for (const job of jobs) {
      batch.enqueued(job.opts.jobId, job.tenantId ?? NO_TENANT, now + (job.opts.delay ?? 0), now);
    }
  }

  private tenantOf(job: Job): string | undefined {
    const tenantId = (job as TenantJob).tenant?.tenantId ?? jobLogRef(job).tenantId;
    return tenantId && this.rootOptions.tenantIdPattern.test(tenantId) ? tenantId : undefined;
  }

  private batchOf(definition: TenantQueueDefinition): VisibilityBatch {
    let batch = this.batches.get(definition.name);
    if (!batch)
      this.batches.set(
        definition.name,
        (batch = new VisibilityBatch(new VisibilityKeys(definition))),
      );
    return batch;
  }

  private async writeAll(): Promise<void> {
    const ttl = this.options.windowMinutes * 60 + 120;
    for (const batch of this.batches.values()) {
      if (batch.empty) continue;
      try {
        await batch.flush(this.redis.client, Date.now(), ttl);
      } catch (error) {
        this.logger.error(
          `${tenantLogFields()} visibility flush of ${batch.keys.definition.name}: ${(error as Error).message}`,
        );
      }
    }
  }
}

function finalReason(job: Job): string {
  const reason = job.failedReason ?? '';
  if (reason.startsWith(TIMEOUT_REASON_PREFIX.trim())) return 'TIMEOUT';
  if (job.attemptsMade >= (job.opts.attempts ?? 1)) return 'ATTEMPTS_EXHAUSTED';
  return 'NON_RETRYABLE';
}
