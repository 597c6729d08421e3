import { Logger } from '@nestjs/common';
import { TenantContext, TenantJob, TenantProcessor, TenantWorkerHost } from '../../lib';

export const IMPORTS_QUEUE = 'imports';

export interface ImportChunk {
  importId: string;
  offset: number;
  size: number;
}

/** Imports one chunk of rows; each chunk is a small job, so other tenants' chunks run in between. */
@TenantProcessor(IMPORTS_QUEUE, { concurrency: 4, removeOnComplete: { count: 1000 } })
export class ImportProcessor extends TenantWorkerHost {
  private readonly logger = new Logger('FairnessDemo');

  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<ImportChunk>) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    this.logger.log(
      `tenant ${this.tenant.tenantId}: import ${job.data.importId} rows ${job.data.offset}..${job.data.offset + job.data.size - 1}`,
    );
    return { imported: job.data.size };
  }
}
