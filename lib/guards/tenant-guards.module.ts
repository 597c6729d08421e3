import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TENANT_QUEUE_MODULE_OPTIONS } from '../core/options/core.options';
import { TenantGuardOptions } from './tenant-guard-options.interface';
import { JobCancellations } from './job-cancellations';
import { TENANT_GUARD_OPTIONS, resolveGuardOptions } from './tenant-guard.options';
import { TenantJobGuardsStage } from './tenant-job-guards.stage';
import { TenantRequiredGuard } from './tenant-required.guard';
import { TenantStatusService } from './tenant-status.service';

const providers = [
  {
    provide: TENANT_GUARD_OPTIONS,
    useFactory: (options: { guards?: TenantGuardOptions }) => resolveGuardOptions(options.guards),
    inject: [TENANT_QUEUE_MODULE_OPTIONS],
  },
  TenantStatusService,
  TenantJobGuardsStage,
  TenantRequiredGuard,
  JobCancellations,
];

/**
 * Job guards (tenant active, entitlement, permission, in the `admission` phase),
 * `TenantRequiredGuard` and job cancellations; options slice `guards`.
 */
@Module({
  imports: [DiscoveryModule],
  providers,
  exports: [TENANT_GUARD_OPTIONS, TenantStatusService, TenantRequiredGuard, JobCancellations],
})
export class TenantGuardsModule {}
