import { INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  TenantContext,
  TenantProcessor,
  TenantQueue,
  TenantQueueInspector,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../../lib';
import { TenantMetricsGauges } from '../../../lib/metrics/tenant-metrics.gauges';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { Registry } from 'prom-client';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

@TenantProcessor('flood', { concurrency: 10 })
class FloodProcessor extends TenantWorkerHost {
  async process() {
    await sleep(1);
  }
}

@Module({ providers: [FloodProcessor] })
class WorkerModule {}

async function createApp(
  prefix: string,
  withWorker: boolean,
  registry = new Registry(),
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ...testRootImports(prefix, {
        metrics: { registry, flushIntervalMs: 100, gaugeIntervalMs: 0 },
      }),
      TenantQueueModule.registerQueue({ name: 'flood' }),
      ...(withWorker ? [WorkerModule] : []),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  return app.init();
}

describe('TenantQueueInspector: two tenants under a flood', () => {
  const prefix = uniquePrefix('insp');
  let producer: INestApplication;
  let worker: INestApplication | undefined;

  afterAll(async () => {
    await worker?.close();
    await producer?.close();
  });

  it('reports what was enqueued, then what ran, from any process', async () => {
    const registry = new Registry();
    producer = await createApp(prefix, false, registry);
    const queue = producer.get<TenantQueue>('TenantQueue:flood');
    const tenant = producer.get(TenantContext);
    const inspector = producer.get(TenantQueueInspector);
    for (let i = 0; i < 3; i++) {
      await tenant.run('acme', () =>
        queue.addBulk(Array.from({ length: 100 }, (_, n) => ({ name: 'n', data: { n } }))),
      );
    }
    await sleep(20);
    await tenant.run('globex', () =>
      queue.addBulk(Array.from({ length: 30 }, (_, n) => ({ name: 'n', data: { n } }))),
    );
    await producer.get(TenantMetricsRecorder).flush();

    const acme = await inspector.getTenant('flood', 'acme');
    const globex = await inspector.getTenant('flood', 'globex');
    expect(acme).toMatchObject({ backlog: 300, inFlight: 0, source: 'counters' });
    expect(globex).toMatchObject({ backlog: 30, inFlight: 0 });
    expect(acme.lag.samples).toBe(0);
    const listed = await inspector.listTenants({ queue: 'flood' });
    expect(listed.map((s) => [s.tenantId, s.backlog])).toEqual([
      ['acme', 300],
      ['globex', 30],
    ]);
    // Ages read at one instant (listTenants reads Redis' clock once; two getTenant calls each
    // read their own, the later one a busy machine's milliseconds later).
    const [acmeAge, globexAge] = listed.map((s) => s.oldestWaitingMs);
    expect(acmeAge).toBeGreaterThanOrEqual(globexAge + 15);

    // The backlog gauge is refreshed from the same Redis figures.
    await producer.get(TenantMetricsGauges).refresh();
    const backlog = await registry.getSingleMetric('tenant_queue_backlog')!.get();
    const gauge = (tenant: string) => backlog.values.find((v) => v.labels.tenant === tenant)?.value;
    expect([gauge('acme'), gauge('globex')]).toEqual([300, 30]);

    // A second process drains the queue; the producer's inspector sees the result.
    worker = await createApp(prefix, true);
    await waitFor(
      async () => (await queue.bullQueue.getCompletedCount()) === 330,
      'the flood to drain',
      30_000,
    );
    await worker.close();
    worker = undefined;
    const after = await inspector.listTenants({ queue: 'flood' });
    const byTenant = Object.fromEntries(after.map((s) => [s.tenantId, s]));
    for (const [id, count] of [
      ['acme', 300],
      ['globex', 30],
    ] as const) {
      const stats = byTenant[id];
      expect(stats).toMatchObject({ backlog: 0, inFlight: 0, oldestWaitingMs: 0 });
      expect(stats.results).toEqual({
        completed: count,
        failed: 0,
        timedOut: 0,
        cancelled: 0,
        deadLettered: 0,
      });
      expect(stats.lag.samples).toBe(count);
      expect(stats.lag.p50!).toBeGreaterThan(0);
      expect(stats.lag.p50!).toBeLessThanOrEqual(stats.lag.p95!);
      expect(stats.lag.p95!).toBeLessThanOrEqual(stats.lag.p99!);
      expect(stats.lag.p99!).toBeLessThan(60_000);
    }
  });
});
