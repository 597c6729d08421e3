import { Injectable } from '@nestjs/common';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';
import { callListener, thrownText } from '../core/logging/call-listener';
import type { Job } from 'bullmq';
import { TenantContext } from '../core/context/tenant-context';
import { CancelReason, cancelMessage, parseCancelReason } from '../core/errors';
import { TenantActor } from '../core/types/actor.interface';
import { TenantJob } from '../core/types/tenant-job.interface';
import { TenantWorkerPlugin } from '../core/processor/tenant-worker-plugin.decorator';
import { TenantJobRunner } from '../core/processor/tenant-job.runner';
import { WorkerEvents } from '../core/processor/tenant-job-pipeline';

/**
 * A job that was cancelled instead of run (never retried, not a tenant failure).
 * @publicApi
 */
export interface JobCancelledEvent {
  reason: CancelReason;
  /** The `failedReason` without its `[cancelled:<REASON>] ` prefix. */
  message: string;
  queueName: string;
  jobName: string;
  jobId: string | undefined;
  /** The job's tenant; undefined when it had no valid (or, with signing, no authentic) envelope. */
  tenantId: string | undefined;
  actor: TenantActor | undefined;
}

/**
 * A listener of `JobCancellations.onCancelled(listener)`.
 * @publicApi
 */
export type JobCancelledListener = (event: JobCancelledEvent) => void;

/**
 * Where an app (or the metrics feature) observes cancellations: `onCancelled(listener)` is called
 * once per cancelled job, after BullMQ recorded it, inside the job's tenant context. Fed by the
 * `failed` event of every worker this process runs.
 * @publicApi
 */
@Injectable()
@TenantWorkerPlugin(10)
export class JobCancellations {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  private readonly listeners = new Set<JobCancelledListener>();
  /** Logs a listener's error in the cancelled job's context (built once, no closure per call). */
  private readonly listenerFailed = (error: unknown): void => {
    this.logger.error(`${tenantLogFields()} JobCancellations listener threw: ${thrownText(error)}`);
  };

  constructor(
    private readonly runner: TenantJobRunner,
    private readonly context: TenantContext,
  ) {}

  /** @internal Listens to the `failed` event of each worker the module starts. */
  attach(worker: WorkerEvents): void {
    worker.on('failed', (job: Job | undefined) => {
      const reason = parseCancelReason(job?.failedReason);
      if (!job || !reason || this.listeners.size === 0) return;
      this.runner.runInJobContext(job, () => this.emit(job as TenantJob, reason));
    });
  }

  /** Subscribes; returns the unsubscribe function. */
  onCancelled(listener: JobCancelledListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(job: TenantJob, reason: CancelReason): void {
    const event: JobCancelledEvent = {
      reason,
      message: cancelMessage(job.failedReason),
      queueName: job.queueName,
      jobName: job.name,
      jobId: job.id,
      tenantId: this.context.tenantId,
      actor: this.context.actor,
    };
    // An `async` listener is assignable to a void one: its rejection is logged as a throw is.
    for (const listener of this.listeners) callListener(listener, event, this.listenerFailed);
  }
}
