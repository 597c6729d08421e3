import { Logger, Module, OnModuleInit } from '@nestjs/common';
import { TenantFairness, TenantQueueModule } from '../../lib';
import { IMPORTS_QUEUE, ImportProcessor } from './import.processor';
import { ImportsController } from './imports.controller';
import { RendersModule } from './renders.module';
import { ApiBudgetModule } from './api-budget.module';

/**
 * Fair share demo: a fair `imports` queue (each tenant at most 2 chunks admitted at once, at most
 * 5 in a row), big imports split into chunk jobs with `addChunked`, and slow-lane changes logged.
 * Start a 200,000-row import for one tenant, then a small one for another: the small one finishes
 * while the big one is still running. `RendersModule` shares worker time instead of turns. The
 * same holds inside a tenant between its users (`x-user-id`): the imports' chunks carry the user
 * as their fair key.
 */
@Module({
  imports: [
    TenantQueueModule.registerQueue({
      name: IMPORTS_QUEUE,
      // fairKey: a tenant's turns go round its users (the x-user-id of each import).
      fairness: { defaultConcurrency: 2, maxConsecutive: 5, maxBacklog: 10_000, fairKey: 'job' },
    }),
    RendersModule,
    ApiBudgetModule,
  ],
  controllers: [ImportsController],
  providers: [ImportProcessor],
})
export class FairnessDemoModule implements OnModuleInit {
  private readonly logger = new Logger('FairnessDemo');

  constructor(private readonly fairness: TenantFairness) {}

  onModuleInit(): void {
    this.fairness.onSlowLane((event) =>
      this.logger.warn(`tenant ${event.tenantId} ${event.state} the slow lane of ${event.queue}`),
    );
  }
}
