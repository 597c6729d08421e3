import * as prom from 'prom-client';
import { LAG_BUCKETS_MS } from './lag-buckets';
import { PrometheusMetricsSink } from './prometheus-metrics.sink';

const SECONDS = LAG_BUCKETS_MS.map((ms) => ms / 1000);

/** The text prom-client writes for the same observations made the usual way, one by one. */
async function observedOneByOne(lags: number[], runs: number[], results: [string, string][]) {
  const registry = new prom.Registry();
  const labelNames = ['queue', 'tenant'];
  const lag = new prom.Histogram({
    name: 'tenant_queue_scheduling_lag_seconds',
    help: 'Seconds from enqueue (or scheduled time) to the start of a job',
    labelNames,
    buckets: SECONDS,
    registers: [registry],
  });
  const run = new prom.Histogram({
    name: 'tenant_queue_run_duration_seconds',
    help: 'Seconds one job attempt ran',
    labelNames,
    buckets: SECONDS,
    registers: [registry],
  });
  const jobs = new prom.Counter({
    name: 'tenant_queue_jobs_total',
    help: 'Job attempts by result (completed, failed, timed_out, cancelled, dead_lettered)',
    labelNames: ['queue', 'tenant', 'result', 'reason'],
    registers: [registry],
  });
  for (const ms of lags) lag.observe({ queue: 'q', tenant: 'acme' }, ms / 1000);
  for (const ms of runs) run.observe({ queue: 'q', tenant: 'acme' }, ms / 1000);
  for (const [result, reason] of results) jobs.inc({ queue: 'q', tenant: 'acme', result, reason });
  return registry;
}

describe('PrometheusMetricsSink: counted locally, folded into prom-client when collected', () => {
  it('exports exactly what observing each value in prom-client would', async () => {
    const lags = [0, 3, 5, 7.5, 99, 1200, 61_000, 400_000];
    const runs = [1, 1, 2, 30_000];
    const results: [string, string][] = [
      ['completed', ''],
      ['completed', ''],
      ['failed', ''],
      ['dead_lettered', 'ATTEMPTS_EXHAUSTED'],
      ['cancelled', 'TENANT_SUSPENDED'],
    ];
    const registry = new prom.Registry();
    const sink = new PrometheusMetricsSink(prom, registry);
    const series = sink.series('q', 'acme');
    for (const ms of lags) series.lag(ms);
    for (const ms of runs) series.runTime(ms);
    series.plain(0);
    sink.countResult('q', 'acme', 'completed', '');
    series.plain(1);
    series.reasoned('dead_lettered', 'ATTEMPTS_EXHAUSTED');
    sink.countResult('q', 'acme', 'cancelled', 'TENANT_SUSPENDED');

    const expected = await observedOneByOne(lags, runs, results);
    for (const name of [
      'tenant_queue_scheduling_lag_seconds',
      'tenant_queue_run_duration_seconds',
      'tenant_queue_jobs_total',
    ]) {
      expect(await registry.getSingleMetricAsString(name)).toBe(
        await expected.getSingleMetricAsString(name),
      );
    }
    // Collected twice: the same figures (rebuilt from the local counts, not added again).
    const once = await registry.metrics();
    expect(await registry.metrics()).toBe(once);
  });

  it('sums the series of two sinks sharing a registry (a second app in one process)', async () => {
    const registry = new prom.Registry();
    const first = new PrometheusMetricsSink(prom, registry);
    const second = new PrometheusMetricsSink(prom, registry);
    first.series('q', 'acme').lag(10);
    second.series('q', 'acme').lag(20);
    second.series('q', 'globex').plain(0);
    const lag = await registry.getSingleMetric('tenant_queue_scheduling_lag_seconds')!.get();
    const count = (lag.values as { metricName?: string; labels: object; value: number }[]).find(
      (v) =>
        v.metricName === 'tenant_queue_scheduling_lag_seconds_count' &&
        (v.labels as { tenant?: string }).tenant === 'acme',
    );
    expect(count?.value).toBe(2);
    const jobs = await registry.getSingleMetric('tenant_queue_jobs_total')!.get();
    expect(jobs.values).toEqual([
      { value: 1, labels: { queue: 'q', tenant: 'globex', result: 'completed', reason: '' } },
    ]);
  });
});
