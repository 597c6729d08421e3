import { TenantJob } from '../core/types/tenant-job.interface';
import { TenantWorkerHost } from '../core/processor/tenant-worker-host';
import { TenantCronRun } from './tenant-cron.decorator';
import { UNKNOWN_CRON_HAND_BACK_MS, handBackUnknownCron } from './unknown-cron';
import { Messages } from '../tenant-queue.messages';

export type TenantCronHandler = (run: TenantCronRun, job: TenantJob) => Promise<unknown>;

/**
 * @internal Worker host of a cron queue: calls the `@TenantCron` method named by the job, inside
 * the job's tenant context (the runner restores it from the envelope).
 */
export class TenantCronHost extends TenantWorkerHost {
  constructor(private readonly handlers: ReadonlyMap<string, TenantCronHandler>) {
    super();
  }

  async process(job: TenantJob<{ occurrence: string }>, token?: string): Promise<unknown> {
    const handler = this.handlers.get(job.name);
    if (!handler) {
      // Another version's cron (a rolling deploy): back to BullMQ for an instance that has it.
      await handBackUnknownCron(job, token);
      throw new Error(
        Messages.unknownCronGivenUp(job.name, String(job.id), UNKNOWN_CRON_HAND_BACK_MS),
      );
    }
    const run: TenantCronRun = {
      name: job.name,
      tenantId: job.tenant!.tenantId,
      occurrence: new Date(job.data.occurrence),
      jobId: job.id!,
    };
    return handler(run, job);
  }
}
