import { INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueInspector,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../../lib';
import { TenantQueueRedis } from '../../../lib/core/redis/tenant-queue.redis';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { VisibilityKeys } from '../../../lib/metrics/visibility-keys';
import { testRootImports } from '../../support/test-module';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

@TenantProcessor('reports', { concurrency: 4 })
class ReportsProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ fail?: boolean }>) {
    if (job.data.fail) throw new Error('boom');
  }
}

@Module({ providers: [ReportsProcessor] })
class WorkerModule {}

describe('TenantQueueInspector.history: the last hour per tenant', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('hist'), {
          metrics: { sink: false, flushIntervalMs: 100, windowMinutes: 5 },
        }),
        TenantQueueModule.registerQueue({ name: 'reports', attempts: 1 }),
        WorkerModule,
      ],
    }).compile();
    app = await moduleRef.createNestApplication({ logger: false }).init();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('gives 60 minute points with lag percentiles and results, kept an hour in Redis', async () => {
    const queue = app.get<TenantQueue>('TenantQueue:reports');
    const inspector = app.get(TenantQueueInspector);
    await app.get(TenantContext).run('acme', async () => {
      await queue.addBulk(Array.from({ length: 20 }, () => ({ name: 'r', data: {} })));
      await queue.add('r', { fail: true });
    });
    await waitFor(async () => {
      await app.get(TenantMetricsRecorder).flush();
      const h = await inspector.history('reports', 'acme');
      const sum = (f: 'completed' | 'deadLettered') => h.points.reduce((s, p) => s + p[f], 0);
      return sum('completed') === 20 && sum('deadLettered') === 1;
    }, 'the jobs to be counted');

    const history = await inspector.history('reports', 'acme');
    expect(history).toMatchObject({ queue: 'reports', tenantId: 'acme', minutes: 60 });
    expect(history.points).toHaveLength(60);
    const at = history.points.map((p) => p.at);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(at[59] - at[0]).toBe(59 * 60_000);
    const active = history.points.filter((p) => p.started > 0);
    expect(active.reduce((s, p) => s + p.started, 0)).toBe(21);
    for (const p of active) {
      expect(p.p50).not.toBeNull();
      expect(p.p50!).toBeLessThanOrEqual(p.p95!);
      expect(p.p95!).toBeLessThanOrEqual(p.p99!);
    }
    for (const p of history.points.filter((p) => p.started === 0)) expect(p.p50).toBeNull();
    expect(
      (await inspector.history('reports', 'globex')).points.every((p) => p.started === 0),
    ).toBe(true);

    // The minute hash the flush wrote lives an hour, not the 5-minute window.
    const keys = new VisibilityKeys(queue.definition);
    const minute = Math.floor(active[active.length - 1].at / 60_000);
    const ttl = await app.get(TenantQueueRedis).client.ttl(keys.minute('acme', minute));
    expect(ttl).toBeGreaterThan(59 * 60);
    expect(ttl).toBeLessThanOrEqual(62 * 60);
  });
});
