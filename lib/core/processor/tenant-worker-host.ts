import type { Worker } from 'bullmq';
import { TenantJob } from '../types/tenant-job.interface';

/**
 * Base class of a `@TenantProcessor`. `process()` runs once per job inside that job's tenant
 * context; throw to fail the attempt (BullMQ retries it per the job's options).
 * @publicApi
 */
export abstract class TenantWorkerHost<W extends Worker = Worker> {
  private tenantWorker: W | undefined;

  /** The BullMQ worker, available from `onApplicationBootstrap` on. */
  get worker(): W {
    if (!this.tenantWorker) {
      throw new Error(
        `${this.constructor.name}.worker is not started yet (it starts at bootstrap).`,
      );
    }
    return this.tenantWorker;
  }

  /** @internal */
  attachWorker(worker: W): void {
    this.tenantWorker = worker;
  }

  abstract process(job: TenantJob, token?: string, signal?: AbortSignal): Promise<unknown>;
}
