import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Job } from 'bullmq';
import {
  InjectTenantQueue,
  OnTenantWorkerEvent,
  RequiresActorPermission,
  RequiresEntitlement,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantWorkerHost,
  UseJobGuards,
  isTenantJobContext,
  parseCancelReason,
} from '../../lib';

/** What the processors and the user guard of test/e2e/nest/guards.e2e-spec.ts saw. */
export const handled: { jobId: string; tenantId: string | undefined }[] = [];
export const failedEvents: {
  jobId: string;
  reason: string | undefined;
  tenantId: string | undefined;
}[] = [];
export const guardSaw: { jobId: string; jobContext: boolean; tenantId: string | undefined }[] = [];

@RequiresEntitlement('exports')
@TenantProcessor('exports', { autorun: false, concurrency: 4 })
export class ExportProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  @RequiresActorPermission('reports:export')
  async process(job: TenantJob) {
    handled.push({ jobId: job.id!, tenantId: this.tenant.tenantId });
    return 'exported';
  }

  @OnTenantWorkerEvent('failed')
  onFailed(job: Job) {
    failedEvents.push({
      jobId: job.id!,
      reason: parseCancelReason(job.failedReason),
      tenantId: this.tenant.tenantId,
    });
  }
}

@Injectable()
export class NotBlockedGuard implements CanActivate {
  constructor(private readonly tenant: TenantContext) {}

  canActivate(context: ExecutionContext): boolean {
    const job = context.getArgByIndex<TenantJob<{ blocked?: boolean }>>(0);
    guardSaw.push({
      jobId: job.id!,
      jobContext: isTenantJobContext(context),
      tenantId: this.tenant.tenantId,
    });
    return job.data.blocked !== true;
  }
}

@UseJobGuards(NotBlockedGuard)
@TenantProcessor('custom', { autorun: false })
export class CustomGuardedProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob) {
    handled.push({ jobId: job.id!, tenantId: this.tenant.tenantId });
  }
}

@Injectable()
export class Producer {
  constructor(
    @InjectTenantQueue('exports') readonly exports: TenantQueue,
    @InjectTenantQueue('custom') readonly custom: TenantQueue,
    readonly tenant: TenantContext,
  ) {}

  asUser(tenantId: string, userId: string, queue: TenantQueue, data: Record<string, unknown> = {}) {
    return this.tenant.run({ tenantId, actor: { type: 'user', id: userId } }, () =>
      queue.add('export', data),
    );
  }
}
