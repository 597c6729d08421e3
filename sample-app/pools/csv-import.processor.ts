import { Logger } from '@nestjs/common';
import { TenantContext, TenantJob, TenantProcessor, TenantWorkerHost } from '../../lib';

export const CSV_IMPORTS = 'csv-imports';
/** acme's dedicated pool: its own BullMQ queue and workers. */
export const ACME_POOL = 'csv-imports-acme';

export interface CsvImport {
  file: string;
  rows: number;
}

/**
 * Imports a CSV file. One process runs every pool by default; start dedicated workers with
 * `CSV_IMPORT_POOLS=csv-imports-acme` (and the shared ones with `CSV_IMPORT_POOLS=csv-imports`).
 */
@TenantProcessor(CSV_IMPORTS, { concurrency: 2, pools: process.env.CSV_IMPORT_POOLS?.split(',') })
export class CsvImportProcessor extends TenantWorkerHost {
  private readonly logger = new Logger('PoolsDemo');

  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<CsvImport>) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    this.logger.log(
      `tenant ${this.tenant.tenantId}: imported ${job.data.file} on pool ${job.queueName}`,
    );
    return { pool: job.queueName, rows: job.data.rows };
  }
}
