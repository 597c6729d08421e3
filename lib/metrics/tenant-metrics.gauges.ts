import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';
import { MetricsSink, noopMetricsSink } from './metrics-sink.interface';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { ResolvedMetricsOptions, TENANT_QUEUE_METRICS_OPTIONS } from './metrics.options';
import { TenantMetricsRecorder } from './tenant-metrics.recorder';
import { TenantQueueInspector } from './tenant-queue-inspector.service';

/**
 * @internal Refreshes the backlog and in-flight gauges from Redis every `gaugeIntervalMs`,
 * summed per tenant label (the labels the counters chose, see `TenantMetricsRecorder.labeler`);
 * labels that disappeared are set to 0. Every tenant of every queue is counted (tenants beyond
 * the labelled ones under `other`), each queue on its own: one queue that cannot be read keeps
 * its last figures and is logged (once until it reads again), the others are refreshed.
 */
@Injectable()
export class TenantMetricsGauges implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  /** Per queue: the labels set at its last refresh (to zero those that disappear). */
  private readonly previous = new Map<string, Set<string>>();
  /** Queues whose last refresh failed, with the error logged for them. */
  private readonly failing = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly inspector: TenantQueueInspector,
    private readonly registry: TenantQueueRegistry,
    private readonly recorder: TenantMetricsRecorder,
    @Inject(MetricsSink) private readonly sink: MetricsSink,
    @Inject(TENANT_QUEUE_METRICS_OPTIONS) private readonly options: ResolvedMetricsOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (this.sink === noopMetricsSink || this.options.gaugeIntervalMs === 0) return;
    this.timer = setInterval(() => void this.refresh(), this.options.gaugeIntervalMs);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The refresh under way: the next timer tick joins it instead of starting another. */
  private refreshing: Promise<void> | undefined;

  /**
   * Reads every queue's tenants from Redis and sets the gauges, queue by queue. A call while a
   * refresh runs shares it (with many tenants one refresh can outlast `gaugeIntervalMs`: two at
   * once would double the load on Redis exactly when it is busy).
   */
  refresh(): Promise<void> {
    this.refreshing ??= this.refreshAll().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async refreshAll(): Promise<void> {
    for (const queue of this.registry.getQueueNames()) {
      try {
        await this.refreshQueue(queue);
        this.failing.delete(queue);
      } catch (error) {
        const message = (error as Error)?.message ?? String(error);
        if (this.failing.get(queue) === message) continue;
        this.failing.set(queue, message);
        this.logger.error(`${tenantLogFields()} gauge refresh of queue "${queue}": ${message}`);
      }
    }
  }

  private async refreshQueue(queue: string): Promise<void> {
    const labeler = this.recorder.labeler;
    const sums = new Map<string, { backlog: number; inFlight: number }>();
    await this.inspector.forEachTenantCount(queue, (page) => {
      for (const stats of page) {
        const tenant = labeler.label(stats.tenantId);
        const sum = sums.get(tenant) ?? { backlog: 0, inFlight: 0 };
        sum.backlog += stats.backlog;
        sum.inFlight += stats.inFlight;
        sums.set(tenant, sum);
      }
    });
    const before = this.previous.get(queue) ?? new Set<string>();
    for (const tenant of before) {
      if (sums.has(tenant)) continue;
      this.sink.setBacklog(queue, tenant, 0);
      this.sink.setInFlight(queue, tenant, 0);
    }
    for (const [tenant, sum] of sums) {
      this.sink.setBacklog(queue, tenant, sum.backlog);
      this.sink.setInFlight(queue, tenant, sum.inFlight);
    }
    this.previous.set(queue, new Set(sums.keys()));
  }
}
