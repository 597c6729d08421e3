import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { MetricsSink, noopMetricsSink } from './metrics-sink.interface';
import {
  ResolvedMetricsOptions,
  TENANT_QUEUE_METRICS_OPTIONS,
  TenantLabeler,
} from './metrics.options';
import { TenantQueueInspector } from './tenant-queue-inspector.service';

/**
 * @internal Refreshes the backlog and in-flight gauges from Redis every `gaugeIntervalMs`,
 * summed per tenant label; labels that disappeared are set to 0.
 */
@Injectable()
export class TenantMetricsGauges implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('TenantQueue');
  private readonly labeler: TenantLabeler;
  private readonly previous = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly inspector: TenantQueueInspector,
    @Inject(MetricsSink) private readonly sink: MetricsSink,
    @Inject(TENANT_QUEUE_METRICS_OPTIONS) private readonly options: ResolvedMetricsOptions,
  ) {
    this.labeler = new TenantLabeler(options);
  }

  onApplicationBootstrap(): void {
    if (this.sink === noopMetricsSink || this.options.gaugeIntervalMs === 0) return;
    this.timer = setInterval(
      () =>
        this.refresh().catch((error: Error) =>
          this.logger.error(`${tenantLogFields()} gauge refresh: ${error.message}`),
        ),
      this.options.gaugeIntervalMs,
    );
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads every queue's tenants from Redis and sets the gauges. */
  async refresh(): Promise<void> {
    const sums = new Map<
      string,
      { queue: string; tenant: string; backlog: number; inFlight: number }
    >();
    for (const stats of await this.inspector.listTenants({ limit: 1000 })) {
      const tenant = this.labeler.label(stats.tenantId);
      const key = `${stats.queue}\u0000${tenant}`;
      const sum = sums.get(key) ?? { queue: stats.queue, tenant, backlog: 0, inFlight: 0 };
      sum.backlog += stats.backlog;
      sum.inFlight += stats.inFlight;
      sums.set(key, sum);
    }
    for (const key of this.previous) {
      if (sums.has(key)) continue;
      const [queue, tenant] = key.split('\u0000');
      this.sink.setBacklog(queue, tenant, 0);
      this.sink.setInFlight(queue, tenant, 0);
    }
    this.previous.clear();
    for (const [key, sum] of sums) {
      this.sink.setBacklog(sum.queue, sum.tenant, sum.backlog);
      this.sink.setInFlight(sum.queue, sum.tenant, sum.inFlight);
      this.previous.add(key);
    }
  }
}
