import { ChildProcess } from 'node:child_process';
import type { INestApplicationContext } from '@nestjs/common';
import { DeadLetters, TenantFairness, TenantQueueRegistry } from '../../../lib';
import { bootScaleoutApp } from '../../fixtures/scaleout-app';
import { SCALEOUT_QUEUE, ScaleoutBatch, scaleoutKeys } from '../../fixtures/scaleout-shared';
import { ask, forkFixture, killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

jest.setTimeout(90_000);

const NOISY = 400;
const CAP = 3;
const LIGHT = ['light-0', 'light-1', 'light-2', 'light-3', 'light-4'];

/**
 * Producer 1: a noisy tenant's flood and a capped tenant. Producer 2, once that is in: light
 * tenants, plus a tenant whose jobs always fail and one whose jobs are cancelled.
 */
const PLANS: ScaleoutBatch[][] = [
  [
    { tenantId: 'noisy', count: NOISY, kind: 'ok', ms: 5 },
    { tenantId: 'capped', count: 30, kind: 'ok', ms: 30 },
  ],
  [
    ...LIGHT.map((tenantId) => ({ tenantId, count: 10, kind: 'ok' as const, ms: 5 })),
    { tenantId: 'doomed', count: 8, kind: 'fail', ms: 1 },
    { tenantId: 'suspended', count: 8, kind: 'cancel', ms: 1 },
  ],
];
const TOTAL = PLANS.flat().reduce((sum, batch) => sum + batch.count, 0);

describe('4 worker processes and 2 producer processes on one Redis, fair queue', () => {
  const prefix = uniquePrefix('so');
  const keys = scaleoutKeys(prefix);
  const children: ChildProcess[] = [];
  let redis: TestRedisClient;
  let app: INestApplicationContext;

  const outcomes = async () => {
    const counted = await redis.hgetall(keys.outcomes);
    const deadLettered = (
      await app.get(DeadLetters).list('doomed', { queue: SCALEOUT_QUEUE, limit: 1 })
    ).total;
    return {
      completed: Number(counted.completed ?? 0),
      cancelled: Number(counted.cancelled ?? 0),
      failed: Number(counted.failed ?? 0),
      deadLettered,
    };
  };

  beforeAll(async () => {
    redis = openRedis();
    app = await bootScaleoutApp(prefix, []);
    await app.get(TenantFairness).setConcurrency(SCALEOUT_QUEUE, 'capped', CAP);
    const env = { TQ_PREFIX: prefix, TQ_CONCURRENCY: '4' };
    const [workers, producers] = await Promise.all([
      Promise.all([1, 2, 3, 4].map(() => forkFixture('scaleout-worker.ts', env, children))),
      Promise.all(PLANS.map(() => forkFixture('scaleout-producer.ts', env, children))),
    ]);
    // The whole load waits in Redis before any worker takes a job, so the order of starts is
    // decided by the queue, not by which process happened to boot first.
    await ask(producers[0], { batches: PLANS[0] });
    await ask(producers[1], { batches: PLANS[1] });
    for (const worker of workers) worker.send('run');
    await waitFor(
      async () => {
        const { completed, cancelled, deadLettered } = await outcomes();
        return completed + cancelled + deadLettered === TOTAL;
      },
      'every job to reach an outcome',
      60_000,
    );
  }, 90_000);

  afterAll(async () => {
    await killAll(children);
    await app?.close();
    await redis?.quit();
  });

  it('loses nothing: enqueued = completed + cancelled + dead-lettered, counted in Redis', async () => {
    const enqueued = await redis.hgetall(keys.enqueued);
    expect(Object.values(enqueued).reduce((sum, n) => sum + Number(n), 0)).toBe(TOTAL);
    const { completed, cancelled, failed, deadLettered } = await outcomes();
    expect(completed).toBe(Number(enqueued.ok));
    expect(cancelled).toBe(Number(enqueued.cancel));
    expect(deadLettered).toBe(Number(enqueued.fail));
    expect(failed).toBe(Number(enqueued.fail));

    // Every job ran; only the failing ones more than once (2 attempts each).
    const runs = await redis.hgetall(keys.runs);
    expect(Object.keys(runs)).toHaveLength(TOTAL);
    expect(Object.values(runs).filter((n) => n !== '1')).toHaveLength(Number(enqueued.fail));
    const bull = app.get(TenantQueueRegistry).getQueue(SCALEOUT_QUEUE).bullQueue;
    const counts = await bull.getJobCounts('wait', 'active', 'delayed', 'prioritized');
    expect(Object.values(counts).every((n) => n === 0)).toBe(true);
  });

  it('holds a per-tenant cap across the four worker processes', async () => {
    const max = await redis.hgetall(keys.max);
    expect(Number(max.capped)).toBeLessThanOrEqual(CAP);
    expect(Number(max.capped)).toBeGreaterThan(1);
    expect(Number(max.noisy)).toBeGreaterThan(CAP); // uncapped tenants use every free slot
  });

  it("serves the light tenants in turns, not after the noisy tenant's flood", async () => {
    const order = await redis.lrange(keys.order, 0, -1);
    const lastLight = Math.max(...LIGHT.map((tenant) => order.lastIndexOf(tenant)));
    const noisyBefore = order.slice(0, lastLight).filter((t) => t === 'noisy').length;
    // FIFO would run all 400 noisy jobs first; turns finish every light tenant well before.
    expect(noisyBefore).toBeLessThan(NOISY / 2);
  });

  it('leaves no backlog, no held slot and no per-tenant gate key behind', async () => {
    const fairness = app.get(TenantFairness);
    const { bullPrefix } = app.get(TenantQueueRegistry).getQueue(SCALEOUT_QUEUE).definition;
    for (const tenant of ['noisy', 'capped', ...LIGHT, 'doomed', 'suspended']) {
      await waitFor(async () => {
        const state = await fairness.getTenant(SCALEOUT_QUEUE, tenant);
        return state.backlog === 0 && state.inFlight === 0;
      }, `tenant ${tenant} to hold nothing`);
    }
    // Only the tenant with a runtime cap keeps its settings; drained tenants leave no key.
    const tenantKey = (tenant: string) => `${bullPrefix}:~fair:t:${tenant}`;
    for (const tenant of ['noisy', ...LIGHT, 'suspended']) {
      expect(await redis.exists(tenantKey(tenant))).toBe(0);
    }
    // Nor a field in the gate-wide run-time hashes (in flight, pass, rate schedule).
    for (const hash of ['inf', 'pass', 'tat']) {
      const left = await redis.hkeys(`${bullPrefix}:~fair:${hash}`);
      expect(left.filter((tenant) => tenant !== 'capped')).toEqual([]);
    }
    // Tenants with settings are listed (their settings hash exists); the others are not.
    const withSettings = await redis.smembers(`${bullPrefix}:~fair:conf`);
    expect(withSettings).toContain('capped');
    for (const tenant of ['noisy', ...LIGHT, 'suspended'])
      expect(withSettings).not.toContain(tenant);
    expect(await redis.hget(tenantKey('capped'), 'cap')).toBe(String(CAP));
  });
});
