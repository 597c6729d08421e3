import type { Attributes, Counter, Gauge, Histogram, Meter } from '@opentelemetry/api';
import { JobResult, MetricsSink } from '../metrics';
import { TENANT_ID_ATTRIBUTE } from './otel-api';

/**
 * The module's job metrics as OpenTelemetry instruments (same names as the Prometheus sink),
 * with attributes `queue` and `tenant.id` (the bounded tenant label), plus `result` and `reason`
 * on the job counter: `metrics: { sink: new OpenTelemetryMetricsSink(metrics.getMeter('my-app')) }`.
 * @publicApi
 */
export class OpenTelemetryMetricsSink implements MetricsSink {
  private readonly lag: Histogram;
  private readonly runTime: Histogram;
  private readonly jobs: Counter;
  private readonly backlog: Gauge;
  private readonly inFlight: Gauge;
  /** Attribute sets by queue, then tenant label (both bounded), so a call allocates none. */
  private readonly sets = new Map<string, Map<string, Attributes>>();
  private readonly resultSets = new Map<Attributes, Map<string, Attributes>>();

  constructor(meter: Meter) {
    this.lag = meter.createHistogram('tenant_queue_scheduling_lag_seconds', {
      unit: 's',
      description: 'Seconds from enqueue (or scheduled time) to the start of a job',
    });
    this.runTime = meter.createHistogram('tenant_queue_run_duration_seconds', {
      unit: 's',
      description: 'Seconds one job attempt ran',
    });
    this.jobs = meter.createCounter('tenant_queue_jobs_total', {
      description:
        'Job attempts by result (completed, failed, timed_out, cancelled, dead_lettered)',
    });
    this.backlog = meter.createGauge('tenant_queue_backlog', {
      description:
        'Jobs waiting to start, cluster-wide (every process reports it: aggregate with max)',
    });
    this.inFlight = meter.createGauge('tenant_queue_in_flight', {
      description: 'Jobs started and not finished, cluster-wide (aggregate with max)',
    });
  }

  observeLag(queue: string, tenant: string, seconds: number): void {
    this.lag.record(seconds, this.of(queue, tenant));
  }

  observeRunTime(queue: string, tenant: string, seconds: number): void {
    this.runTime.record(seconds, this.of(queue, tenant));
  }

  countResult(queue: string, tenant: string, result: JobResult, reason: string): void {
    const base = this.of(queue, tenant);
    let byResult = this.resultSets.get(base);
    if (!byResult) this.resultSets.set(base, (byResult = new Map()));
    const key = reason ? `${result}\u0000${reason}` : result;
    let set = byResult.get(key);
    if (!set) byResult.set(key, (set = { ...base, result, reason }));
    this.jobs.add(1, set);
  }

  setBacklog(queue: string, tenant: string, value: number): void {
    this.backlog.record(value, this.of(queue, tenant));
  }

  setInFlight(queue: string, tenant: string, value: number): void {
    this.inFlight.record(value, this.of(queue, tenant));
  }

  private of(queue: string, tenant: string): Attributes {
    let byTenant = this.sets.get(queue);
    if (!byTenant) this.sets.set(queue, (byTenant = new Map()));
    let set = byTenant.get(tenant);
    if (!set) byTenant.set(tenant, (set = { queue, [TENANT_ID_ATTRIBUTE]: tenant }));
    return set;
  }
}
