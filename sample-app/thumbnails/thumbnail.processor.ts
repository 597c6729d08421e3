import { Logger } from '@nestjs/common';
import {
  OnTenantWorkerEvent,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantWorkerHost,
} from '../../lib';
import { ThumbnailStore } from './thumbnail.store';

export interface MakeThumbnail {
  file: string;
}

@TenantProcessor('thumbnails', { concurrency: 5 })
export class ThumbnailProcessor extends TenantWorkerHost {
  private readonly logger = new Logger('ThumbnailProcessor');

  constructor(
    private readonly tenant: TenantContext,
    private readonly store: ThumbnailStore,
  ) {
    super();
  }

  async process(job: TenantJob<MakeThumbnail>) {
    await new Promise((resolve) => setTimeout(resolve, 150)); // pretend to resize an image
    const thumbnail = job.data.file.replace(/(\.\w+)?$/, '.thumb$1');
    this.store.save({
      file: job.data.file,
      thumbnail,
      jobId: job.id!,
      madeAt: new Date().toISOString(),
    });
    return { thumbnail };
  }

  @OnTenantWorkerEvent('completed')
  onCompleted(job: TenantJob<MakeThumbnail>) {
    this.logger.log(
      `[tenant ${this.tenant.tenantId}] thumbnail of ${job.data.file} done ` +
        `(correlation ${this.tenant.correlationId})`,
    );
  }
}
