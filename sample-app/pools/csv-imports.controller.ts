import { Body, Controller, Get, NotFoundException, Param, Post } from '@nestjs/common';
import { InjectTenantQueue, TenantContext, TenantQueue, TenantQueueRegistry } from '../../lib';
import { CSV_IMPORTS, CsvImport } from './csv-import.processor';

/**
 * `POST /csv-imports {"file":"orders.csv"}` with `x-tenant-id` enqueues an import; the answer
 * says which pool took it (acme's go to `csv-imports-acme`, everyone else's to `csv-imports`).
 * `GET /csv-imports/:pool/:jobId` shows the job's state, for the job's own tenant only.
 */
@Controller('csv-imports')
export class CsvImportsController {
  constructor(
    @InjectTenantQueue(CSV_IMPORTS) private readonly queue: TenantQueue<CsvImport>,
    private readonly registry: TenantQueueRegistry,
    private readonly tenant: TenantContext,
  ) {}

  @Post()
  async start(@Body() body: { file?: string; rows?: number }) {
    const job = await this.queue.add('csv-import', {
      file: String(body.file ?? 'import.csv'),
      rows: Number(body.rows ?? 100),
    });
    return { jobId: job.id, pool: job.queueName, tenantId: job.tenantId };
  }

  @Get(':pool/:jobId')
  async state(@Param('pool') pool: string, @Param('jobId') jobId: string) {
    if (!this.registry.poolsToConsume(CSV_IMPORTS).includes(pool)) throw new NotFoundException();
    const bull = this.registry.getQueue(pool).bullQueue;
    // State first: once it is final, the job read after it carries the matching outcome.
    const state = await bull.getJobState(jobId);
    const job = await bull.getJob(jobId);
    if (!job || job.data?._tenant?.tenantId !== this.tenant.getTenantIdOrThrow()) {
      throw new NotFoundException();
    }
    return { jobId, pool, state, result: job.returnvalue ?? null };
  }
}
