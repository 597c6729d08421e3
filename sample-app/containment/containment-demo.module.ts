import { Logger, Module, OnModuleInit } from '@nestjs/common';
import { DeadLetters, TenantQueueModule } from '../../lib';
import { DeadLettersController } from './dead-letters.controller';
import { FlakyFixes, FlakyJobProcessor } from './flaky-job.processor';

/**
 * Failure containment demo: a flaky job (retries, timeout, non-retryable errors) and a
 * per-tenant dead-letter list / replay / purge API. Needs `TenantQueueModule.forRoot` and
 * `ClsModule.forRoot` in the host app.
 */
@Module({
  imports: [
    TenantQueueModule.registerQueue({
      name: 'containment-demo',
      attempts: 3,
      backoff: { type: 'exponential', delay: 200, jitter: 0.5 },
      deadLetterCap: 100,
    }),
  ],
  controllers: [DeadLettersController],
  providers: [FlakyJobProcessor, FlakyFixes],
})
export class ContainmentDemoModule implements OnModuleInit {
  private readonly logger = new Logger('ContainmentDemo');

  constructor(private readonly deadLetters: DeadLetters) {}

  onModuleInit(): void {
    // Alerting hook: runs once per new dead letter, in that dead letter's tenant context.
    this.deadLetters.onDeadLetter((letter) =>
      this.logger.warn(
        `ALERT tenant ${letter.tenantId}: ${letter.name} (${letter.jobId}) dead-lettered, ` +
          `${letter.reason} after ${letter.attempts} attempt(s): ${letter.failedReason}`,
      ),
    );
  }
}
