import { Injectable } from '@nestjs/common';
import { JobTimeoutError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { runOptionsOf } from '../envelope/job-run-options';
import { JobRunContext, JobStage } from './tenant-job-pipeline';
import { TenantJobStage } from './tenant-job-stage.decorator';
import { TenantProcessorOptions } from './tenant-processor.decorator';

/**
 * Gives each attempt a deadline (`timeoutMs` of the job, else of the processor). The handler gets
 * one signal that aborts on BullMQ's own cancellation (`worker.cancelJob`) or at the deadline; at the deadline the
 * attempt fails with `JobTimeoutError` whether or not the handler has stopped.
 */
@Injectable()
@TenantJobStage('deadline', 10)
export class TimeoutStage implements JobStage {
  /** Only a processor with a `timeoutMs` (the runner adds it for a job with its own). */
  appliesTo(_definition: unknown, processorOptions: TenantProcessorOptions): boolean {
    return (processorOptions.timeoutMs ?? 0) > 0;
  }

  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown> {
    const timeoutMs = runOptionsOf(context.job).timeoutMs ?? context.processorOptions.timeoutMs;
    // No deadline: pass straight through, without an async frame (each one costs under ALS).
    if (!timeoutMs || timeoutMs <= 0) return next();
    return this.withDeadline(context, next, timeoutMs);
  }

  private async withDeadline(
    context: JobRunContext,
    next: () => Promise<unknown>,
    timeoutMs: number,
  ): Promise<unknown> {
    const deadline = new AbortController();
    const upstream = context.signal;
    const forward = () => deadline.abort(upstream?.reason);
    if (upstream?.aborted) forward();
    else upstream?.addEventListener('abort', forward, { once: true });
    context.signal = deadline.signal;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const { queueName, name } = context.job;
        const error = new JobTimeoutError(
          timeoutMs,
          Messages.jobTimedOut(queueName, name, timeoutMs),
        );
        deadline.abort(error);
        reject(error);
      }, timeoutMs);
    });
    let running: Promise<unknown> | undefined;
    try {
      running = next();
      return await Promise.race([running, expired]);
    } catch (error) {
      // A handler that ignores the signal settles later, in the background: never unhandled.
      if (error instanceof JobTimeoutError) running?.catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
      upstream?.removeEventListener('abort', forward);
    }
  }
}
