import { Body, Controller, Get, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import {
  InjectTenantQueue,
  TenantContext,
  TenantQueue,
  TenantRequiredGuard,
  parseCancelReason,
} from '../../lib';
import { EXPORTS_QUEUE, ExportJob } from './export.processor';
import { tenantFacingReason } from '../tenant-facing';

/** Starts exports for the request's tenant; refused up front for a suspended tenant (403). */
@Controller('exports')
export class ExportsController {
  constructor(
    @InjectTenantQueue(EXPORTS_QUEUE) private readonly queue: TenantQueue<ExportJob>,
    private readonly tenant: TenantContext,
  ) {}

  /** `delayMs` lets the demo suspend the tenant while the job waits. */
  @Post()
  @UseGuards(TenantRequiredGuard)
  start(@Body() body: { report?: string; delayMs?: number }) {
    const delay = Math.min(Math.max(Number(body?.delayMs) || 0, 0), 60_000);
    return this.queue.add('export', { report: String(body?.report ?? 'orders') }, { delay });
  }

  /** Open to a suspended tenant too, so it can see why its export was cancelled. */
  @Get(':id')
  async status(@Param('id') id: string) {
    // State first: once it is final, the job read after it carries the matching outcome.
    const state = await this.queue.bullQueue.getJobState(id);
    const job = await this.queue.bullQueue.getJob(id);
    // A tenant only ever sees its own jobs.
    if (!job || job.data?._tenant?.tenantId !== this.tenant.tenantId) throw new NotFoundException();
    return {
      id,
      state,
      cancelReason: parseCancelReason(job.failedReason) ?? null,
      failedReason: tenantFacingReason(job.failedReason),
      result: job.returnvalue ?? null,
    };
  }
}
