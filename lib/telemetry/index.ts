export { TENANT_ID_ATTRIBUTE } from './otel-api';
export { OpenTelemetryMetricsSink } from './opentelemetry-metrics.sink';
