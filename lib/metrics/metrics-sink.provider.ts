import { Provider } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { Messages } from '../tenant-queue.messages';
import { MetricsSink, noopMetricsSink } from './metrics-sink.interface';
import { ResolvedMetricsOptions, TENANT_QUEUE_METRICS_OPTIONS } from './metrics.options';
import { PrometheusMetricsSink, loadPromClient } from './prometheus-metrics.sink';

/** The sink `metrics.sink` asks for; prom-client is loaded here, lazily, if at all. */
export function createMetricsSink(options: ResolvedMetricsOptions): MetricsSink {
  const sink = options.sink;
  if (sink === false) return noopMetricsSink;
  if (typeof sink === 'object') return sink;
  const prom = loadPromClient();
  if (!prom) {
    if (sink === 'prometheus') {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidOptions(
          'metrics.sink',
          "is 'prometheus' but prom-client is not installed: install prom-client, or set sink: false",
        ),
      );
    }
    return noopMetricsSink;
  }
  return new PrometheusMetricsSink(prom, options.registry as Registry | undefined);
}

export const METRICS_SINK_PROVIDER: Provider = {
  provide: MetricsSink,
  useFactory: createMetricsSink,
  inject: [TENANT_QUEUE_METRICS_OPTIONS],
};
