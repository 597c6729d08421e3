import { Inject, Injectable } from '@nestjs/common';
import { JobRunContext, JobStage } from '../core/processor/tenant-job-pipeline';
import { TenantJobStage } from '../core/processor/tenant-job-stage.decorator';
import { TENANT_ID_ATTRIBUTE } from './otel-api';
import { ResolvedTelemetry, TENANT_TELEMETRY } from './telemetry.options';

/**
 * Puts `tenant.id` on the span a job runs in (BullMQ's `process` span, active while the handler
 * runs, so the handler's own spans are its children). Registered only with `telemetry` set and
 * `@opentelemetry/api` installed.
 */
@Injectable()
@TenantJobStage('observe', 20)
export class TenantSpanStage implements JobStage {
  constructor(
    @Inject(TENANT_TELEMETRY) private readonly telemetry: ResolvedTelemetry | undefined,
  ) {}

  /** Only with `telemetry` set and `@opentelemetry/api` installed. */
  appliesTo(): boolean {
    return this.telemetry?.api !== undefined;
  }

  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown> {
    const tenantId = context.envelope?.tenantId;
    const telemetry = this.telemetry!;
    if (tenantId !== undefined) {
      telemetry
        .api!.trace.getActiveSpan()
        ?.setAttribute(TENANT_ID_ATTRIBUTE, telemetry.label(tenantId));
    }
    return next();
  }
}
