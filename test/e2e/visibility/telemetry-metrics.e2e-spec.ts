import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../../lib';
import { OpenTelemetryMetricsSink } from '../../../lib/telemetry';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { waitFor } from '../../support/wait';

/** Collects on demand (what an exporter's periodic reader does on its timer). */
class OnDemandReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

let done = 0;

@TenantProcessor('reports', { concurrency: 2 })
class ReportsProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ fail?: boolean }>): Promise<void> {
    done++;
    if (job.data.fail) throw new Error('boom');
  }
}

describe('the module metrics as OpenTelemetry instruments, with tenant.id', () => {
  let moduleRef: TestingModule;
  const reader = new OnDemandReader();
  const provider = new MeterProvider({ readers: [reader] });

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('otelm'), {
          metrics: {
            sink: new OpenTelemetryMetricsSink(provider.getMeter('tq-test')),
            maxTenantLabels: 1,
          },
        }),
        TenantQueueModule.registerQueue({ name: 'reports', attempts: 1 }),
      ],
      providers: [ReportsProcessor],
    })
    class AppModule {}
    moduleRef = await bootTestModule({ imports: [AppModule] });
  });

  afterAll(async () => {
    await moduleRef?.close();
    await provider.shutdown();
  });

  it('counts results and records lag and run time per queue and bounded tenant label', async () => {
    const tenant = moduleRef.get(TenantContext);
    const reports = moduleRef.get<TenantQueue<{ fail?: boolean }>>('TenantQueue:reports');
    await tenant.run('acme', () => reports.add('r', {}));
    await tenant.run('acme', () => reports.add('r', {}));
    await tenant.run('acme', () => reports.add('r', { fail: true }));
    await tenant.run('globex', () => reports.add('r', {}));
    await waitFor(() => done === 4, 'the reports to run');

    const read = async () => {
      const { resourceMetrics } = await reader.collect();
      return new Map(
        resourceMetrics.scopeMetrics
          .flatMap((scope) => scope.metrics)
          .map((metric) => [metric.descriptor.name, metric.dataPoints] as const),
      );
    };
    await waitFor(async () => {
      const jobs = (await read()).get('tenant_queue_jobs_total') ?? [];
      return jobs.reduce((sum, point) => sum + (point.value as number), 0) === 4;
    }, 'four results');
    const metrics = await read();
    const jobs = metrics.get('tenant_queue_jobs_total')!.map((point) => ({
      attributes: point.attributes,
      value: point.value,
    }));
    expect(jobs).toEqual(
      expect.arrayContaining([
        {
          attributes: { queue: 'reports', 'tenant.id': 'acme', result: 'completed', reason: '' },
          value: 2,
        },
        {
          attributes: {
            queue: 'reports',
            'tenant.id': 'acme',
            result: 'dead_lettered',
            reason: 'ATTEMPTS_EXHAUSTED',
          },
          value: 1,
        },
        // maxTenantLabels 1: globex is folded into "other", as in the Prometheus labels.
        {
          attributes: { queue: 'reports', 'tenant.id': 'other', result: 'completed', reason: '' },
          value: 1,
        },
      ]),
    );
    expect(jobs).toHaveLength(3);
    for (const name of [
      'tenant_queue_scheduling_lag_seconds',
      'tenant_queue_run_duration_seconds',
    ]) {
      const points = metrics.get(name)!;
      const counts = points.map((p) => [
        p.attributes['tenant.id'],
        (p.value as { count: number }).count,
      ]);
      expect([name, counts.sort()]).toEqual([
        name,
        [
          ['acme', 3],
          ['other', 1],
        ],
      ]);
    }
  });
});
