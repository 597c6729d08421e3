export { TenantQueueInspector } from './tenant-queue-inspector.service';
export type {
  TenantQueueStats,
  TenantLagStats,
  TenantResultCounts,
  TenantListQuery,
} from './tenant-queue-stats.interface';
export { MetricsSink, noopMetricsSink } from './metrics-sink.interface';
export type { JobResult } from './metrics-sink.interface';
export type { TenantQueueMetricsOptions } from './metrics-options.interface';
export { TenantQueueStateSource, TenantQueueControls } from './tenant-queue-state-source.interface';
export type { TenantQueueLiveState } from './tenant-queue-state-source.interface';
export { LAG_BUCKETS_MS } from './lag-buckets';
export type {
  JobExplanation,
  JobGatePlace,
  JobHold,
  ExplainedJobState,
} from './job-explanation.interface';
export type { GateJobAnswer } from './tenant-queue-state-source.interface';
export type { TenantQueueSummary, QueueJobCounts } from './queue-summary.interface';
export type { TenantLagHistory, TenantLagPoint } from './lag-history';
// @internal: for the features that build on metrics (fairness's state source, telemetry's sink).
export type {
  GateJob,
  TenantQueueSettings,
  TenantQueueSettingsChange,
} from './tenant-queue-state-source.interface';
export {
  TENANT_QUEUE_METRICS_OPTIONS,
  TenantLabeler,
  resolveMetricsOptions,
} from './metrics.options';
