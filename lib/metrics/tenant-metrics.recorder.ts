import { TenantWorkerLauncher } from '../core/processor/worker-launcher';
import { TenantJobStage } from '../core/processor/tenant-job-stage.decorator';
import { TenantWorkerPlugin } from '../core/processor/tenant-worker-plugin.decorator';
import { TenantEnqueueObserver } from '../core/queues/queue-seams.decorator';
import { EnqueueObserver } from '../core/queues/queue-feature.interface';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
} from '@nestjs/common';
import type { Job } from 'bullmq';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';
import { TIMEOUT_REASON_PREFIX, parseCancelReason } from '../core/errors';
import { finalFailureReason } from '../core/processor/job-error.mapper';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import {
  JobRunContext,
  JobStage,
  WorkerEvents,
  WorkerPlugin,
} from '../core/processor/tenant-job-pipeline';
import { PreparedJob } from '../core/queues/job-dispatcher.interface';
import { TenantQueueRedis, settlesWithin } from '../core/redis/tenant-queue.redis';
import { HISTORY_MINUTES } from './lag-history';
import { seriesOf } from './metric-series';
import { MetricsSink } from './metrics-sink.interface';
import {
  ResolvedMetricsOptions,
  TENANT_QUEUE_METRICS_OPTIONS,
  TenantLabeler,
} from './metrics.options';
import { readyAtOf } from './ready-at';
import { RESULT_FIELDS } from './tenant-record';
import { QueueVisibility } from './visibility-batch';
import { NO_TENANT, VisibilityKeys } from './visibility-keys';
import { TenantEnvelopeCodec } from '../core/envelope/tenant-envelope.codec';
import { Messages } from '../tenant-queue.messages';

// Indexes into RESULT_FIELDS; the first three are also the sink's PLAIN_RESULTS indexes.
const COMPLETED_FIELD = 0;
const FAILED_FIELD = 1;
const TIMED_OUT_FIELD = 2;
const CANCELLED_FIELD = 3;
const DEAD_LETTERED_FIELD = 4;

/**
 * @internal Records every job's lag, run time and result in one per-(queue, tenant) record:
 * local counts the metrics sink folds when scraped, and counters flushed to Redis every
 * `flushIntervalMs` (one script call per 500 tenants of each active queue), so the job path
 * itself never waits on Redis and writes no job id there.
 */
@Injectable()
@TenantJobStage('observe', 10)
@TenantWorkerPlugin(30)
@TenantEnqueueObserver(10)
export class TenantMetricsRecorder
  implements
    JobStage,
    WorkerPlugin,
    EnqueueObserver,
    OnApplicationBootstrap,
    BeforeApplicationShutdown
{
  private readonly logger = new TenantQueueLogger('TenantQueue');
  /** Per queue definition (by identity: no string key per job). */
  private readonly queues = new Map<TenantQueueDefinition, QueueVisibility>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private flushAgain: Promise<void> | undefined;
  /** Set once the shutdown bound cut the last flush: what it still writes is dropped unlogged. */
  private dropped = false;

  constructor(
    private readonly redis: TenantQueueRedis,
    private readonly codec: TenantEnvelopeCodec,
    @Inject(TENANT_QUEUE_METRICS_OPTIONS) private readonly options: ResolvedMetricsOptions,
    @Inject(MetricsSink) private readonly sink: MetricsSink,
    private readonly launcher: TenantWorkerLauncher,
    /** This app's tenant labels: counters, gauges (TenantMetricsGauges) and spans alike. */
    readonly labeler: TenantLabeler,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left, after this module's workers have closed. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.launcher.close();
    // Within the shutdown bound: with Redis away, the last batches are dropped, not waited for,
    // said once here rather than as each queue's failed write when its connection closes.
    if (await settlesWithin(this.flush(), this.redis.shutdownMsLeft())) return;
    this.dropped = true;
    this.logger.warn(
      `${tenantLogFields()} ${Messages.visibilityNotWrittenAtShutdown(this.redis.shutdownTimeoutMs)}`,
    );
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

  /**
   * Per job: one record lookup, and on the first start its lag (from enqueue, gate waiting
   * included) counted in local arrays. Run time and results come from the worker's events.
   */
  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown> {
    const job = context.job;
    if (job.attemptsMade === 0 && (job.attemptsStarted ?? 1) <= 1) {
      const now = Date.now();
      const record = this.queueOf(context.definition).record(
        context.envelope?.tenantId ?? NO_TENANT,
      );
      record.firstStart(now, Math.max(0, now - readyAtOf(job)));
    }
    return next();
  }

  attach(worker: WorkerEvents, definition: TenantQueueDefinition): void {
    const queue = this.queueOf(definition);
    worker.on('completed', (job) => this.outcome(queue, job, COMPLETED_FIELD, ''));
    worker.on('failed', (job, error) => {
      if (!job) return;
      const cancel = parseCancelReason(job.failedReason);
      const final = job.finishedOn !== undefined;
      if (cancel) this.outcome(queue, job, CANCELLED_FIELD, cancel);
      else if (final) this.outcome(queue, job, DEAD_LETTERED_FIELD, finalFailureReason(job, error));
      else if (job.failedReason?.startsWith(TIMEOUT_REASON_PREFIX.trim())) {
        this.outcome(queue, job, TIMED_OUT_FIELD, '');
      } else this.outcome(queue, job, FAILED_FIELD, '');
    });
  }

  /** One attempt ended: its run time (BullMQ's `processedOn` to `finishedOn`) and its result. */
  private outcome(queue: QueueVisibility, job: Job, field: number, reason: string): void {
    const now = Date.now();
    const record = queue.record(this.tenantOf(job) ?? NO_TENANT);
    record.result(now, field);
    if (job.processedOn)
      record.series.runTime(Math.max(0, (job.finishedOn ?? now) - job.processedOn));
    if (field <= TIMED_OUT_FIELD) record.series.plain(field);
    else record.series.reasoned(RESULT_FIELDS[field], reason);
  }

  /** @internal */
  enqueued(definition: TenantQueueDefinition, jobs: PreparedJob[]): void {
    const queue = this.queueOf(definition);
    const now = Date.now();
    for (const job of jobs)
      queue.record(job.tenantId ?? NO_TENANT).enqueue(now, (job.opts.delay ?? 0) > 0);
  }

  /**
   * Opened by the runner in this process; else read back and opened as a worker would. A job
   * whose envelope a worker refuses (malformed, unsigned or forged) counts as one without a
   * tenant: its raw id never becomes a label or a record, nor is charged to that tenant.
   */
  private tenantOf(job: Job): string | undefined {
    return this.codec.envelopeOf(job)?.tenantId;
  }

  private queueOf(definition: TenantQueueDefinition): QueueVisibility {
    let queue = this.queues.get(definition);
    if (!queue) {
      const name = definition.name;
      queue = new QueueVisibility(new VisibilityKeys(definition), (tenantId) =>
        seriesOf(
          this.sink,
          name,
          this.labeler.label(tenantId === NO_TENANT ? undefined : tenantId),
        ),
      );
      this.queues.set(definition, queue);
    }
    return queue;
  }

  private async writeAll(): Promise<void> {
    // The hour of history (lag-history.ts) reads the same minute hashes: they live an hour.
    const ttl = Math.max(this.options.windowMinutes, HISTORY_MINUTES) * 60 + 120;
    for (const queue of this.queues.values()) {
      if (this.dropped) return;
      try {
        await queue.flush(this.redis.client, Date.now(), ttl);
      } catch (error) {
        if (this.dropped) return;
        this.logger.error(
          `${tenantLogFields()} visibility flush of ${queue.keys.definition.name}: ${(error as Error).message}`,
        );
      }
    }
  }
}
