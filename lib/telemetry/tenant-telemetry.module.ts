import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { TENANT_QUEUE_MODULE_OPTIONS } from '../core/options/core.options';
import { TenantLabeler } from '../metrics';
import { ResolvedTelemetry, TENANT_TELEMETRY, resolveTelemetry } from './telemetry.options';
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
export class TenantTelemetryModule implements OnModuleInit {
  constructor(
    @Inject(TENANT_TELEMETRY) private readonly telemetry: ResolvedTelemetry | undefined,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * Spans take the metrics' tenant labels (the labels the counters and gauges gave first), so a
   * tenant's `tenant.id` is the same on its spans and its metrics. Without the metrics feature
   * (the testing module) spans keep a label set of their own.
   */
  onModuleInit(): void {
    if (!this.telemetry) return;
    let shared: TenantLabeler;
    try {
      shared = this.moduleRef.get(TenantLabeler, { strict: false });
    } catch {
      return;
    }
    this.telemetry.label = (tenantId) => shared.label(tenantId);
  }
}
