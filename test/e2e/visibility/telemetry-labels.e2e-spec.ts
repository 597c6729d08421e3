import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { BullMQOtel } from 'bullmq-otel';
import { Registry } from 'prom-client';
import {
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { TenantMetricsGauges } from '../../../lib/metrics/tenant-metrics.gauges';
import { uniquePrefix } from '../../support/redis-url';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { installTracing, removeTracing } from '../../support/otel';
import { waitFor } from '../../support/wait';

const exporter = new InMemorySpanExporter();
let done = 0;

@TenantProcessor('labels', { concurrency: 1 })
class LabelsProcessor extends TenantWorkerHost {
  async process(): Promise<void> {
    done++;
  }
}

describe("a job span's tenant.id is its tenant's metric label (one label set per process)", () => {
  const prefix = uniquePrefix('otell');
  const registry = new Registry();
  let producer: TestingModule | undefined;
  let app: TestingModule | undefined;

  beforeAll(() => {
    installTracing(exporter);
  });

  afterAll(async () => {
    await producer?.close();
    await app?.close();
    removeTracing();
  });

  it('labels a tenant past maxTenantLabels "other" on its spans, as in its metrics', async () => {
    // Another process's tenant waits on the queue: this process's gauge refresh counts it, and
    // so gives it this process's one tenant label.
    producer = await bootTestModule({
      imports: [
        ...testRootImports(prefix, { metrics: { sink: false } }),
        TenantQueueModule.registerQueue({ name: 'labels', attempts: 1 }),
      ],
    });
    await producer
      .get(TenantQueueRegistry)
      .getQueue('labels')
      .addForTenant('early', 'later', {}, { delay: 600_000 });
    await producer.close();
    producer = undefined;

    @Module({
      imports: [
        ...testRootImports(prefix, {
          telemetry: new BullMQOtel({ tracerName: 'tq-labels' }),
          metrics: { registry, maxTenantLabels: 1, gaugeIntervalMs: 0 },
        }),
        TenantQueueModule.registerQueue({ name: 'labels', attempts: 1 }),
      ],
      providers: [LabelsProcessor],
    })
    class AppModule {}
    app = await bootTestModule({ imports: [AppModule] });
    await app.get(TenantMetricsGauges).refresh();
    const labels = app.get<TenantQueue>('TenantQueue:labels');
    await labels.addForTenant('late', 'now', {});
    await waitFor(() => done === 1, 'the job to run');
    await waitFor(
      () => exporter.getFinishedSpans().some((s) => s.name === 'process labels'),
      'its process span',
    );

    const completed = (await registry.getSingleMetric('tenant_queue_jobs_total')!.get()).values
      .filter((v) => v.labels.result === 'completed')
      .map((v) => v.labels.tenant);
    const backlog = (await registry.getSingleMetric('tenant_queue_backlog')!.get()).values
      .filter((v) => v.value > 0)
      .map((v) => v.labels.tenant);
    const span = exporter.getFinishedSpans().find((s) => s.name === 'process labels')!;
    expect({ backlog, completed, span: span.attributes['tenant.id'] }).toEqual({
      backlog: ['early'],
      completed: ['other'],
      span: 'other',
    });
  });

  it('labels a tenant "other" when labelFor throws or gives no label, and still enqueues and runs it', async () => {
    const own = new Registry();
    const labelFor = (tenantId: string): string => {
      if (tenantId === 'broken') throw new Error('no tier for broken');
      return tenantId === 'missing' ? (undefined as unknown as string) : 'gold';
    };
    const before = done;
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('otell2'), {
          telemetry: new BullMQOtel({ tracerName: 'tq-labels' }),
          metrics: { registry: own, labelFor, gaugeIntervalMs: 0 },
        }),
        TenantQueueModule.registerQueue({ name: 'labels', attempts: 1 }),
      ],
      providers: [LabelsProcessor],
    })
    class LabelForModule {}
    const second = await bootTestModule({ imports: [LabelForModule] });
    try {
      const labels = second.get<TenantQueue>('TenantQueue:labels');
      // add() resolves for each (a throw after the write would have the caller enqueue it again).
      for (const tenant of ['broken', 'missing', 'fine'])
        await labels.addForTenant(tenant, 'x', {});
      await waitFor(() => done === before + 3, 'the three jobs to run');
      await waitFor(
        async () =>
          (await own.getSingleMetric('tenant_queue_jobs_total')!.get()).values.length === 2,
        'their results',
      );
      const results = (await own.getSingleMetric('tenant_queue_jobs_total')!.get()).values
        .map((v) => `${v.labels.tenant} ${v.labels.result} ${v.value}`)
        .sort();
      expect(results).toEqual(['gold completed 1', 'other completed 2']);
      expect(await labels.bullQueue.getJobCounts('completed', 'failed')).toEqual({
        completed: 3,
        failed: 0,
      });
    } finally {
      await second.close();
    }
  });
});
