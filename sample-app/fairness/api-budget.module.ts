import { Module } from '@nestjs/common';
import {
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../lib';
import { ApiBudgetController, ApiCallMeter } from './api-budget.controller';

/** How long one call to the tenant's API takes in the demo. */
const CALL_MS = 100;

/** Both queues call the tenant's own API: together they keep to one cap and one rate limit. */
const TENANT_API = { defaultConcurrency: 3, rateLimit: { max: 20, per: 1_000 } };

@TenantProcessor('api-sync', { concurrency: 10 })
export class ApiSyncProcessor extends TenantWorkerHost {
  constructor(
    private readonly meter: ApiCallMeter,
    private readonly tenant: TenantContext,
  ) {
    super();
  }

  async process(job: TenantJob<{ resource: string }>) {
    await this.meter.call(this.tenant.getTenantIdOrThrow(), CALL_MS);
    return { synced: job.data.resource };
  }
}

@TenantProcessor('api-webhooks', { concurrency: 10 })
export class ApiWebhookProcessor extends TenantWorkerHost {
  constructor(
    private readonly meter: ApiCallMeter,
    private readonly tenant: TenantContext,
  ) {
    super();
  }

  async process(job: TenantJob<{ event: string }>) {
    await this.meter.call(this.tenant.getTenantIdOrThrow(), CALL_MS);
    return { delivered: job.data.event };
  }
}

/**
 * One budget across queues: `api-sync` and `api-webhooks` share budget `tenant-api`, so a tenant
 * has at most 3 jobs running and 20 starts per second on the two queues together, however it
 * spreads its work over them (each queue alone would allow it 3 and 20 more).
 */
@Module({
  imports: [
    TenantQueueModule.registerQueue({
      name: 'api-sync',
      budget: 'tenant-api',
      fairness: TENANT_API,
    }),
    TenantQueueModule.registerQueue({
      name: 'api-webhooks',
      budget: 'tenant-api',
      fairness: TENANT_API,
    }),
  ],
  controllers: [ApiBudgetController],
  providers: [ApiSyncProcessor, ApiWebhookProcessor, ApiCallMeter],
})
export class ApiBudgetModule {}
