import { Injectable } from '@nestjs/common';
import { NonRetryableError } from '../errors';
import { Messages } from '../tenant-queue.messages';
import { RUN_OPTIONS_KEY, takeRunOptions } from './job-run-options';
import { JobRunContext, JobStage, TenantJobPipeline } from './tenant-job-pipeline';

/**
 * First stage of every job: detaches the `_run` options from the payload and gives the job its
 * `runId` (the `_run.runId` of a replay or an explicit one, else the job id).
 */
@Injectable()
export class RunIdentityStage implements JobStage {
  readonly order = 10;

  constructor(pipeline: TenantJobPipeline) {
    pipeline.useStage(this);
  }

  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown> {
    const job = context.job;
    const raw = (job.data as Record<string, unknown> | undefined)?.[RUN_OPTIONS_KEY];
    const { options, problem } = takeRunOptions(job);
    if (problem) throw new NonRetryableError(Messages.invalidRunOptions(problem));
    Object.defineProperty(job, 'runId', {
      value: options.runId ?? job.id,
      configurable: true,
      enumerable: false,
    });
    if (raw !== undefined) {
      const updateData = job.updateData.bind(job);
      job.updateData = async (data: unknown) => {
        await updateData({ ...(data as object), [RUN_OPTIONS_KEY]: raw });
        job.data = data;
      };
    }
    return next();
  }
}
