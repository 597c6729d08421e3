import { Inject, Injectable } from '@nestjs/common';
import { JobRunContext, JobStage, TenantJobPipeline } from '../core/processor/tenant-job-pipeline';
import { TENANT_ID_ATTRIBUTE } from './otel-api';
import { ResolvedTelemetry, TENANT_TELEMETRY } from './telemetry.options';

/**
 * Puts `tenant.id` on the span a job runs in (BullMQ's `process` span, active while the handler
 * runs, so the handler's own spans are its children). Registered only with `telemetry` set and
 * `@opentelemetry/api` installed.
 */
@Injectable()
export class TenantSpanStage implements JobStage {
  readonly order = 1;
  private readonly telemetry: ResolvedTelemetry;

  constructor(
    pipeline: TenantJobPipeline,
    @Inject(TENANT_TELEMETRY) telemetry: ResolvedTelemetry | undefined,
  ) {
    this.telemetry = telemetry!;
    if (telemetry?.api) pipeline.useStage(this);
  }

  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown> {
    const tenantId = context.envelope?.tenantId;
    if (tenantId !== undefined) {
      this.telemetry
        .api!.trace.getActiveSpan()
        ?.setAttribute(TENANT_ID_ATTRIBUTE, this.telemetry.label(tenantId));
    }
    return next();
  }
}
