import { INestApplication, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  TenantContext,
  TenantFairness,
  TenantQueue,
  TenantQueueInspector,
  TenantQueueModule,
  TenantQueueRegistry,
} from '../../../lib';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { FairJobData, Started, bootFairApp } from '../../fixtures/fairness-app';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

/**
 * A producer app (no worker) with one queue, whose metrics flush only when the test says so
 * (`TenantMetricsRecorder.flush`).
 */
async function bootProducer(
  label: string,
  queue: Parameters<typeof TenantQueueModule.registerQueue>[0],
): Promise<INestApplication> {
  @Module({
    imports: [
      ...testRootImports(uniquePrefix(label), {
        metrics: { flushIntervalMs: 60_000, gaugeIntervalMs: 0 },
      }),
      TenantQueueModule.registerQueue(queue),
    ],
  })
  class ProducerModule {}
  const moduleRef = await Test.createTestingModule({ imports: [ProducerModule] }).compile();
  return moduleRef.createNestApplication({ logger: false }).init();
}

/**
 * `listTenants` (and the dashboard's list, which reads it) picks a queue's tenants from the most
 * recently active and from those whose jobs have waited longest: a tenant whose jobs wait while
 * nothing happens for it is the one an operator looks for, however many tenants were active
 * since.
 */
describe('TenantQueueInspector.listTenants: a tenant whose jobs wait while others are active', () => {
  it('lists the tenant of the oldest waiting jobs of a plain queue behind 40 newer tenants', async () => {
    const app = await bootProducer('stuck-plain', { name: 'plain' });
    try {
      const queue = app.get<TenantQueue>('TenantQueue:plain');
      const context = app.get(TenantContext);
      const inspector = app.get(TenantQueueInspector);
      await context.run('stuck', () => queue.add('n', {}));
      await sleep(50);
      for (let i = 0; i < 40; i++) await context.run(`newer-${i}`, () => queue.add('n', {}));
      await app.get(TenantMetricsRecorder).flush();

      const listed = await inspector.listTenants({ queue: 'plain', limit: 5 });
      expect(listed).toHaveLength(5);
      expect(listed[0]).toMatchObject({ tenantId: 'stuck', backlog: 1 });
      expect(listed[0].oldestWaitingMs).toBeGreaterThanOrEqual(40);
      expect(listed[0].currentLagMs).toBeGreaterThan(listed[4].currentLagMs);
    } finally {
      await app.close();
    }
  });

  describe.each([
    ['a fair queue', {}, {}],
    [
      'a fair queue with lanes and fair keys',
      { lanes: { interactive: { share: 0.6 }, bulk: { share: 0.4 } }, fairKey: 'job' as const },
      { lane: 'bulk', fairKey: 'u1' },
    ],
  ])('on %s', (_label, fairness, opts) => {
    let moduleRef: TestingModule;
    const started: Started[] = [];

    beforeAll(async () => {
      moduleRef = await bootFairApp({
        prefix: uniquePrefix('stuck-fair'),
        fairness,
        concurrency: 4,
        started,
      });
    });

    afterAll(async () => {
      await moduleRef?.close();
    });

    it('lists a paused tenant and a capped one, held in the gate, behind 40 tenants active since', async () => {
      const fairness = moduleRef.get(TenantFairness);
      const queue = moduleRef.get(TenantQueueRegistry).getQueue<FairJobData>('fair');
      const context = moduleRef.get(TenantContext);
      const inspector = moduleRef.get(TenantQueueInspector);
      await fairness.pause('fair', 'paused');
      await fairness.setConcurrency('fair', 'capped', 1);
      await context.run('paused', () =>
        queue.addBulk([0, 1, 2].map(() => ({ name: 'w', data: {}, opts }))),
      );
      await context.run('capped', () =>
        queue.addBulk([
          { name: 'w', data: { ms: 3000 } },
          { name: 'w', data: {} },
        ]),
      );
      await waitFor(() => started.some((s) => s.tenantId === 'capped'), 'capped running');
      await sleep(50);
      for (let i = 0; i < 40; i++) await context.run(`busy-${i}`, () => queue.add('w', {}));
      await waitFor(() => started.length === 41, 'the 40 ran');
      await moduleRef.get(TenantMetricsRecorder).flush();

      const listed = await inspector.listTenants({ queue: 'fair', limit: 5 });
      expect(listed).toHaveLength(5);
      const byId = new Map(listed.map((s) => [s.tenantId, s]));
      expect(byId.get('paused')).toMatchObject({ backlog: 3, paused: true });
      expect(byId.get('capped')).toMatchObject({ backlog: 1, inFlight: 1 });
      expect(
        listed
          .slice(0, 2)
          .map((s) => s.tenantId)
          .sort(),
      ).toEqual(['capped', 'paused']);
    });
  });
});

/**
 * The count reads at most 1,000 of BullMQ's jobs, shared by running, waiting and delayed ones: a
 * fair queue's long prioritized set (its turns) must not leave the delayed set unread, as a fair
 * queue's backlog has no counters to fall back on.
 */
describe('TenantQueueInspector: a delayed job behind 1,500 queued by turn on a fair queue', () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    moduleRef = await bootFairApp({
      prefix: uniquePrefix('budget'),
      fairness: {},
      concurrency: 0,
    });
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  it("counts the delayed job in its tenant's backlog", async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<FairJobData>('fair');
    const context = moduleRef.get(TenantContext);
    const inspector = moduleRef.get(TenantQueueInspector);
    await context.run('flood', () =>
      queue.addBulk(Array.from({ length: 1500 }, () => ({ name: 'w', data: {} }))),
    );
    await context.run('later', () => queue.add('w', {}, { delay: 60_000 }));
    expect(await inspector.getTenant('fair', 'later')).toMatchObject({ backlog: 1, inFlight: 0 });
    expect((await inspector.getTenant('fair', 'flood')).backlog).toBe(1500);
  });
});

/**
 * A fair queue's oldest waiting job is read from the gate (its enqueue time in BullMQ), not
 * estimated from the flushed enqueue counts: a job those counts do not hold yet reads its own
 * age (it read the window's start, about 5 minutes).
 */
describe("TenantQueueInspector: a fair queue's oldest waiting job, from the gate", () => {
  it('reads the age of a paused tenant’s job before any flush, and of one queued by turn', async () => {
    const app = await bootProducer('since', { name: 'held', fairness: {} });
    try {
      const queue = app.get<TenantQueue>('TenantQueue:held');
      const context = app.get(TenantContext);
      const inspector = app.get(TenantQueueInspector);
      await app.get(TenantFairness).pause('held', 'paused');
      const before = Date.now();
      await context.run('paused', () => queue.add('n', {}));
      await context.run('by-turn', () => queue.add('n', {}));
      await sleep(300);
      for (const tenant of ['paused', 'by-turn']) {
        const stats = await inspector.getTenant('held', tenant);
        expect([tenant, stats.backlog]).toEqual([tenant, 1]);
        expect(stats.oldestWaitingMs).toBeGreaterThanOrEqual(250);
        expect(stats.oldestWaitingMs).toBeLessThanOrEqual(Date.now() - before + 50);
      }
      const state = await app.get(TenantFairness).getTenant('held', 'paused');
      expect(state.oldestQueuedAt).toBeGreaterThanOrEqual(before - 50);
    } finally {
      await app.close();
    }
  });
});
