import { TenantJob } from '../core/types/tenant-job.interface';
import { TenantWorkerHost } from '../core/processor/tenant-worker-host';
import { TenantCronRun } from './tenant-cron.decorator';

export type TenantCronHandler = (run: TenantCronRun, job: TenantJob) => Promise<unknown>;

/**
 * @internal Worker host of a cron queue: calls the `@TenantCron` method named by the job, inside
 * the job's tenant context (the runner restores it from the envelope).
 */
export class TenantCronHost extends TenantWorkerHost {
  constructor(private readonly handlers: ReadonlyMap<string, TenantCronHandler>) {
    super();
  }

  async process(job: TenantJob<{ occurrence: string }>): Promise<unknown> {
    const handler = this.handlers.get(job.name);
    if (!handler) throw new Error(`No @TenantCron named "${job.name}" in this app.`);
    const run: TenantCronRun = {
      name: job.name,
      tenantId: job.tenant!.tenantId,
      occurrence: new Date(job.data.occurrence),
      jobId: job.id!,
    };
    return handler(run, job);
  }
}
