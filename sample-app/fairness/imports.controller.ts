import { Body, Controller, Get, Headers, Param, Post, Put } from '@nestjs/common';
import {
  InjectTenantQueue,
  TenantContext,
  TenantFairness,
  TenantQueue,
  addChunked,
} from '../../lib';
import { IMPORTS_QUEUE, ImportChunk } from './import.processor';

/**
 * `POST /imports {"rows": 200000}` with `x-tenant-id` splits one big import into chunk jobs (with
 * `x-user-id`, under that user's fair key, so a colleague's import is not stuck behind it);
 * `GET /imports/fairness/:tenantId` shows that tenant's backlog, in-flight, weight and state;
 * `PUT .../weight` and `PUT .../floor` change its weight and its guaranteed floor.
 */
@Controller('imports')
export class ImportsController {
  constructor(
    @InjectTenantQueue(IMPORTS_QUEUE) private readonly queue: TenantQueue<ImportChunk>,
    private readonly fairness: TenantFairness,
    private readonly tenant: TenantContext,
  ) {}

  @Post()
  async start(
    @Body() body: { rows?: number; importId?: string },
    @Headers('x-user-id') user?: string,
  ) {
    const importId = body.importId ?? `imp-${Date.now().toString(36)}`;
    const jobs = await addChunked(
      this.queue,
      'import-chunk',
      { total: Math.min(Number(body.rows ?? 10_000), 1_000_000) },
      {
        chunkSize: 1000,
        jobIdPrefix: importId,
        data: (chunk) => ({ importId, offset: chunk.offset, size: chunk.size }),
        opts: user ? { fairKey: user } : {},
      },
    );
    return { importId, tenantId: this.tenant.tenantId, chunks: jobs.length };
  }

  @Get('fairness/:tenantId')
  state(@Param('tenantId') tenantId: string) {
    return this.fairness.getTenant(IMPORTS_QUEUE, tenantId);
  }

  @Put('fairness/:tenantId/weight')
  async weight(@Param('tenantId') tenantId: string, @Body() body: { weight: number | null }) {
    await this.fairness.setWeight(IMPORTS_QUEUE, tenantId, body.weight);
    return this.fairness.getTenant(IMPORTS_QUEUE, tenantId);
  }

  /** `{"min": 1}`: the tenant keeps 1 chunk running whatever others import (its cap, 2, stays the burst). */
  @Put('fairness/:tenantId/floor')
  async floor(@Param('tenantId') tenantId: string, @Body() body: { min: number | null }) {
    await this.fairness.setMinConcurrency(IMPORTS_QUEUE, tenantId, body.min);
    return this.fairness.getTenant(IMPORTS_QUEUE, tenantId);
  }
}
