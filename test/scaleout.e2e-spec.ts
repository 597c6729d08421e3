import { ChildProcess } from 'node:child_process';
import type { INestApplicationContext } from '@nestjs/common';
import { DeadLetters, TenantQueueRegistry } from '../lib';
import { bootScaleoutApp } from './fixtures/scaleout-app';
import {
  SCALEOUT_QUEUE,
  ScaleoutBatch,
  ask,
  forkFixture,
  killAll,
  scaleoutKeys,
} from './fixtures/scaleout-shared';
import { uniquePrefix } from './support/redis-url';
import { TestRedisClient, openRedis } from './support/test-redis';
import { waitFor } from './support/wait';

jest.setTimeout(90_000);

const NOISY = 400;
const LIGHT = ['light-0', 'light-1', 'light-2', 'light-3', 'light-4'];

/** Producer 1: a noisy tenant's flood. Producer 2: light tenants, failing and cancelled work. */
const PLANS: ScaleoutBatch[][] = [
  [{ tenantId: 'noisy', count: NOISY, kind: 'ok', ms: 5 }],
  [
    ...LIGHT.map((tenantId) => ({ tenantId, count: 10, kind: 'ok' as const, ms: 5 })),
    { tenantId: 'doomed', count: 8, kind: 'fail', ms: 1 },
    { tenantId: 'suspended', count: 8, kind: 'cancel', ms: 1 },
  ],
];

describe('4 worker processes and 2 producer processes on one Redis', () => {
  const prefix = uniquePrefix('so');
  const keys = scaleoutKeys(prefix);
  const children: ChildProcess[] = [];
  let redis: TestRedisClient;
  let app: INestApplicationContext;

  beforeAll(async () => {
    redis = openRedis();
    app = await bootScaleoutApp(prefix, []);
  });

  afterAll(async () => {
    await killAll(children);
    await app?.close();
    await redis?.quit();
  });

  it('loses nothing: enqueued = completed + cancelled + dead-lettered, counted in Redis', async () => {
    const env = { TQ_PREFIX: prefix, TQ_CONCURRENCY: '4' };
    const [workers, producers] = await Promise.all([
      Promise.all([1, 2, 3, 4].map(() => forkFixture('scaleout-worker.ts', env, children))),
      Promise.all(PLANS.map(() => forkFixture('scaleout-producer.ts', env, children))),
    ]);
    // The whole load waits in Redis before any worker starts, so the order of starts is decided
    // by the queue alone, not by which process happened to boot first.
    await ask(producers[0], { batches: PLANS[0] });
    await ask(producers[1], { batches: PLANS[1] });
    for (const worker of workers) worker.send('run');

    const enqueued = await redis.hgetall(keys.enqueued);
    const total = Object.values(enqueued).reduce((sum, n) => sum + Number(n), 0);
    expect(total).toBe(NOISY + LIGHT.length * 10 + 16);

    const deadLetters = app.get(DeadLetters);
    const deadLettered = async () =>
      (await deadLetters.list('doomed', { queue: SCALEOUT_QUEUE })).total;
    const outcomes = async () => {
      const counted = await redis.hgetall(keys.outcomes);
      return {
        completed: Number(counted.completed ?? 0),
        cancelled: Number(counted.cancelled ?? 0),
        failed: Number(counted.failed ?? 0),
      };
    };
    await waitFor(
      async () => {
        const { completed, cancelled } = await outcomes();
        return completed + cancelled + (await deadLettered()) === total;
      },
      'every job to reach an outcome',
      60_000,
    );
    const { completed, cancelled, failed } = await outcomes();
    expect(completed).toBe(Number(enqueued.ok));
    expect(cancelled).toBe(Number(enqueued.cancel));
    expect(await deadLettered()).toBe(Number(enqueued.fail));
    expect(failed).toBe(Number(enqueued.fail));

    // Every job ran in some worker process; none of the successful ones twice.
    const runs = await redis.hgetall(keys.runs);
    expect(Object.keys(runs)).toHaveLength(total);
    const retried = Object.values(runs).filter((n) => n !== '1');
    expect(retried).toHaveLength(Number(enqueued.fail)); // 2 attempts each, nothing else
    const bull = app.get(TenantQueueRegistry).getQueue(SCALEOUT_QUEUE).bullQueue;
    const counts = await bull.getJobCounts('wait', 'active', 'delayed', 'prioritized');
    expect(Object.values(counts).every((n) => n === 0)).toBe(true);
  });
});
