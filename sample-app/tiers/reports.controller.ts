import { Body, Controller, Get, Inject, Param, Post, Put } from '@nestjs/common';
import {
  InjectTenantQueue,
  InMemoryTenantDirectory,
  TenantContext,
  TenantDirectory,
  TenantFairness,
  TenantQueue,
  TenantTiers,
} from '../../lib';
import { REPORTS_QUEUE } from './demo-tiers';
import { ReportJob, ReportRuns } from './reports.processor';

/**
 * `POST /reports {"count": 5}` queues interactive reports; `{"nightly": true}` queues bulk ones.
 * `GET /reports/limits` shows the caller's weight, cap, rate limit and backlog on the queue;
 * `GET /reports/runs` its last runs and how long each waited.
 */
@Controller()
export class ReportsController {
  constructor(
    @InjectTenantQueue(REPORTS_QUEUE) private readonly queue: TenantQueue<ReportJob>,
    private readonly fairness: TenantFairness,
    private readonly tiers: TenantTiers,
    private readonly tenant: TenantContext,
    private readonly runs: ReportRuns,
    @Inject(TenantDirectory) private readonly directory: TenantDirectory,
  ) {}

  @Post('reports')
  async queueReports(@Body() body: { count?: number; nightly?: boolean }) {
    const count = Math.min(Math.max(Number(body.count ?? 1), 1), 1000);
    const name = body.nightly ? 'nightly-report' : 'report';
    const jobs = await this.queue.addBulk(
      Array.from({ length: count }, (_, i) => ({ name, data: { report: `${name}-${i + 1}` } })),
    );
    return {
      tenantId: this.tenant.tenantId,
      queued: jobs.length,
      lane: body.nightly ? 'bulk' : 'interactive',
    };
  }

  @Get('reports/limits')
  limits() {
    return this.fairness.getTenant(REPORTS_QUEUE, this.tenant.getTenantIdOrThrow());
  }

  @Get('reports/runs')
  recent() {
    return this.runs.of(this.tenant.getTenantIdOrThrow());
  }

  /** Demo back office: move a tenant to another tier; applies at once, no restart. */
  @Put('admin/tenants/:tenantId/tier')
  async setTier(@Param('tenantId') tenantId: string, @Body() body: { tier: string }) {
    if (!(this.directory instanceof InMemoryTenantDirectory)) {
      throw new Error('The tier demo needs the sample directory (guardsDemoPorts).');
    }
    const record = (await this.directory.getTenant(tenantId)) ?? { id: tenantId };
    this.directory.upsert({ ...record, id: tenantId, tier: body.tier });
    await this.tiers.refresh(tenantId);
    return this.fairness.getTenant(REPORTS_QUEUE, tenantId);
  }
}
