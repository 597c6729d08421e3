import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Registry } from 'prom-client';
import {
  TenantContext,
  TenantQueueInspector,
  TenantQueueModule,
  TenantQueueRegistry,
} from '../../../lib';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { COUNT_BUDGET } from '../../../lib/metrics/visibility-count.script';
import { VisibilityKeys } from '../../../lib/metrics/visibility-keys';
import { TenantQueueRedis } from '../../../lib/core/redis/tenant-queue.redis';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { uniquePrefix } from '../../support/redis-url';
import { sleep } from '../../support/wait';

describe('inspector counters: BullMQ is the truth, the counters only a fallback, reconciled', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  async function boot() {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('recon'), {
          metrics: { registry: new Registry(), flushIntervalMs: 100, gaugeIntervalMs: 0 },
        }),
        TenantQueueModule.registerQueue({ name: 'plain' }),
      ],
    })
    class ProducerModule {}
    moduleRef = await bootTestModule({ imports: [ProducerModule] });
    const queue = moduleRef.get(TenantQueueRegistry).getQueue('plain');
    const keys = new VisibilityKeys(queue.definition);
    const redis = moduleRef.get(TenantQueueRedis).client;
    const counted = async () => {
      const [enq, started] = await redis.hmget(keys.totals, 'acme|enq', 'acme|started');
      return Number(enq ?? 0) - Number(started ?? 0);
    };
    return { moduleRef, queue, keys, redis, counted };
  }

  it('reports what BullMQ holds, and corrects counts a killed process left, once they held still', async () => {
    const { moduleRef, queue, keys, redis, counted } = await boot();
    await moduleRef
      .get(TenantContext)
      .run('acme', () => queue.addBulk(Array.from({ length: 3 }, () => ({ name: 'n', data: {} }))));
    await moduleRef.get(TenantMetricsRecorder).flush();
    expect(await counted()).toBe(3);
    // Two starts a killed worker never wrote: the counters now say 5 are waiting.
    await redis.hincrby(keys.totals, 'acme|enq', 2);
    const inspector = moduleRef.get(TenantQueueInspector);
    expect((await inspector.getTenant('plain', 'acme')).backlog).toBe(3);
    expect(await counted()).toBe(5); // seen once: not corrected yet (a write may be on its way)
    await sleep(100 * 3 + 2000 + 200);
    expect((await inspector.getTenant('plain', 'acme')).backlog).toBe(3);
    expect(await counted()).toBe(3);
  }, 30_000);

  it('keeps a view of the counters only while they disagree: a count that finds them agreeing drops it', async () => {
    const { moduleRef, queue, keys, redis, counted } = await boot();
    await moduleRef
      .get(TenantContext)
      .run('acme', () => queue.addBulk(Array.from({ length: 3 }, () => ({ name: 'n', data: {} }))));
    await moduleRef.get(TenantMetricsRecorder).flush();
    // One process's counts flushed before another's: the producer's 2 enqueues of jobs a
    // worker has already started, whose starts are not written yet.
    await redis.hincrby(keys.totals, 'acme|enq', 2);
    const inspector = moduleRef.get(TenantQueueInspector);
    const gauges = () => inspector.forEachTenantCount('plain', () => undefined);
    await gauges();
    expect(await redis.hget(keys.reconcile, 'acme')).not.toBeNull();
    // The worker's flush comes: the counters agree again, and nothing is left to correct.
    await redis.hincrby(keys.totals, 'acme|started', 2);
    expect(await counted()).toBe(3);
    await gauges();
    expect(await redis.hget(keys.reconcile, 'acme')).toBeNull();
    expect(await redis.exists(keys.reconcile)).toBe(0);
  }, 30_000);

  it('falls back to the counters for a queue longer than it counts on demand', async () => {
    const { moduleRef, queue, counted } = await boot();
    const total = COUNT_BUDGET + 10;
    await moduleRef
      .get(TenantContext)
      .run('acme', () =>
        queue.addBulk(Array.from({ length: total }, () => ({ name: 'n', data: {} }))),
      );
    await moduleRef.get(TenantMetricsRecorder).flush();
    expect(await counted()).toBe(total);
    const stats = await moduleRef.get(TenantQueueInspector).getTenant('plain', 'acme');
    expect(stats.backlog).toBe(total);
    expect(stats.oldestWaitingMs).toBeGreaterThanOrEqual(0);
  }, 60_000);
});
