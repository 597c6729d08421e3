import { Module } from '@nestjs/common';
import { TenantQueueModule } from '../../lib';
import { REPORTS_QUEUE } from './demo-tiers';
import { ReportRuns, ReportsProcessor } from './reports.processor';
import { ReportsController } from './reports.controller';

export { DEMO_TIERS } from './demo-tiers';

/**
 * Tiers and lanes demo: a fair `reports` queue with an `interactive` lane (default) and a `bulk`
 * lane for `nightly-report` jobs, and per-tier rate limits and caps from `DEMO_TIERS` (acme is
 * pro, globex and initech are free). Needs `tiers: DEMO_TIERS` and the sample directory in
 * `TenantQueueModule.forRoot(...)`.
 */
@Module({
  imports: [
    TenantQueueModule.registerQueue({
      name: REPORTS_QUEUE,
      fairness: {
        lanes: {
          interactive: { share: 0.5 },
          bulk: { share: 0.5, jobs: ['nightly-report'] },
        },
      },
    }),
  ],
  controllers: [ReportsController],
  providers: [ReportsProcessor, ReportRuns],
})
export class TiersDemoModule {}
