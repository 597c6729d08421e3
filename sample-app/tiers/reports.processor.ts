import { Injectable, Logger } from '@nestjs/common';
import { TenantContext, TenantJob, TenantProcessor, TenantWorkerHost } from '../../lib';
import { REPORTS_QUEUE } from './demo-tiers';

export interface ReportJob {
  report: string;
}

export interface ReportRun {
  jobId: string;
  name: string;
  report: string;
  waitedMs: number;
  ranAt: string;
}

/** The last runs per tenant, so the demo can show who waited how long. */
@Injectable()
export class ReportRuns {
  private readonly runs = new Map<string, ReportRun[]>();

  add(tenantId: string, run: ReportRun): void {
    const list = this.runs.get(tenantId) ?? [];
    list.unshift(run);
    this.runs.set(tenantId, list.slice(0, 50));
  }

  of(tenantId: string): ReportRun[] {
    return this.runs.get(tenantId) ?? [];
  }
}

/** Builds one report (300 ms). Interactive `report` jobs and bulk `nightly-report` jobs share it. */
@TenantProcessor(REPORTS_QUEUE, { concurrency: 2, removeOnComplete: { count: 1000 } })
export class ReportsProcessor extends TenantWorkerHost {
  private readonly logger = new Logger('TiersDemo');

  constructor(
    private readonly tenant: TenantContext,
    private readonly runs: ReportRuns,
  ) {
    super();
  }

  async process(job: TenantJob<ReportJob>) {
    const waitedMs = Date.now() - Date.parse(job.tenant!.enqueuedAt);
    await new Promise((resolve) => setTimeout(resolve, 300));
    this.runs.add(this.tenant.tenantId!, {
      jobId: job.id!,
      name: job.name,
      report: job.data.report,
      waitedMs,
      ranAt: new Date().toISOString(),
    });
    this.logger.log(
      `tenant ${this.tenant.tenantId}: ${job.name} ${job.data.report} after ${waitedMs} ms`,
    );
    return { report: job.data.report };
  }
}
