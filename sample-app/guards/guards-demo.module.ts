import { Logger, Module, OnModuleInit } from '@nestjs/common';
import { JobCancellations, TenantQueueModule } from '../../lib';
import { ExportProcessor, EXPORTS_QUEUE } from './export.processor';
import { ExportsController } from './exports.controller';
import { TenantsAdminController } from './tenants-admin.controller';

export { guardsDemoPorts } from './demo-ports';

/**
 * Job guards demo: an export job behind the "exports" entitlement, and endpoints to suspend a
 * tenant or revoke the feature while a job waits, so it is cancelled with a reason instead of run.
 * Needs `...guardsDemoPorts()` in `TenantQueueModule.forRoot(...)`.
 */
@Module({
  imports: [
    TenantQueueModule.registerQueue({
      name: EXPORTS_QUEUE,
      defaultJobOptions: { attempts: 3, backoff: { type: 'exponential', delay: 500 } },
    }),
  ],
  controllers: [ExportsController, TenantsAdminController],
  providers: [ExportProcessor],
})
export class GuardsDemoModule implements OnModuleInit {
  private readonly logger = new Logger('GuardsDemo');

  constructor(private readonly cancellations: JobCancellations) {}

  onModuleInit(): void {
    this.cancellations.onCancelled((event) =>
      this.logger.log(
        `cancelled ${event.queueName}/${event.jobId} of ${event.tenantId ?? '-'}: ${event.reason}`,
      ),
    );
  }
}
