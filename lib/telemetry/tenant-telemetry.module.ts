import { Module } from '@nestjs/common';
import { TENANT_QUEUE_MODULE_OPTIONS } from '../core/options/core.options';
import { TENANT_TELEMETRY, resolveTelemetry } from './telemetry.options';
import { TelemetryQueueFeature } from './telemetry-queue.feature';
import { TenantSpanStage } from './tenant-span.stage';

/** OpenTelemetry through BullMQ's `telemetry`, with `tenant.id` on spans; options slice `telemetry`. */
@Module({
  providers: [
    {
      provide: TENANT_TELEMETRY,
      useFactory: resolveTelemetry,
      inject: [TENANT_QUEUE_MODULE_OPTIONS],
    },
    TelemetryQueueFeature,
    TenantSpanStage,
  ],
  exports: [TENANT_TELEMETRY, TelemetryQueueFeature],
})
export class TenantTelemetryModule {}
