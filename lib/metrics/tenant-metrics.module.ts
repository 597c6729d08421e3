import { Module } from '@nestjs/common';
import { ClsModule } from 'nestjs-cls';
import { TENANT_QUEUE_MODULE_OPTIONS } from '../core/options/core.options';
import { MetricsSink } from './metrics-sink.interface';
import { METRICS_SINK_PROVIDER } from './metrics-sink.provider';
import {
  ResolvedMetricsOptions,
  TENANT_QUEUE_METRICS_OPTIONS,
  TenantLabeler,
  resolveMetricsOptions,
} from './metrics.options';
import { TenantMetricsGauges } from './tenant-metrics.gauges';
import { TenantMetricsRecorder } from './tenant-metrics.recorder';
import { TenantQueueInspector } from './tenant-queue-inspector.service';

/** Per-tenant lag, run time, outcomes and depth; the inspector; options slice `metrics`. */
@Module({
  imports: [ClsModule],
  providers: [
    {
      provide: TENANT_QUEUE_METRICS_OPTIONS,
      useFactory: resolveMetricsOptions,
      inject: [TENANT_QUEUE_MODULE_OPTIONS],
    },
    METRICS_SINK_PROVIDER,
    // One label set per process: the counters, the gauges and the spans' tenant.id (telemetry).
    {
      provide: TenantLabeler,
      useFactory: (options: ResolvedMetricsOptions) => new TenantLabeler(options),
      inject: [TENANT_QUEUE_METRICS_OPTIONS],
    },
    TenantMetricsRecorder,
    TenantMetricsGauges,
    TenantQueueInspector,
  ],
  exports: [
    TENANT_QUEUE_METRICS_OPTIONS,
    MetricsSink,
    TenantLabeler,
    TenantMetricsRecorder,
    TenantQueueInspector,
  ],
})
export class TenantMetricsModule {}
