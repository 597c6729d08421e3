import type { ChildProcess } from 'node:child_process';
import { TestingModule } from '@nestjs/testing';
import { TenantFairness } from '../../../lib';
import { bootFairApp } from '../../fixtures/fairness-app';
import { FAIR_TEST_OPTIONS, recordKeys } from '../../fixtures/fairness-shared';
import { enqueue, many } from '../../support/jobs';
import { forkFixture, killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

const prefix = uniquePrefix('mp');
const keys = recordKeys(prefix);
const workers: ChildProcess[] = [];
let producer: TestingModule;
let redis: TestRedisClient;
function startWorker(): Promise<ChildProcess> {
  return forkFixture('fairness-worker.ts', { TQ_PREFIX: prefix, TQ_CONCURRENCY: '3' }, workers);
}

/** `count` jobs of `tenantId` on the fair queue, each holding its slot `ms`; resolves with ids. */
async function addWork(tenantId: string, count: number, ms: number): Promise<string[]> {
  return (await enqueue(producer, 'fair', tenantId, many(count, { ms }))).map((job) => job.id);
}

describe('fair gate across three worker processes (real Redis)', () => {
  beforeAll(async () => {
    redis = openRedis();
    producer = await bootFairApp({ prefix, fairness: FAIR_TEST_OPTIONS, concurrency: 0 });
    await Promise.all([startWorker(), startWorker(), startWorker()]);
  }, 60_000);

  afterAll(async () => {
    await killAll(workers);
    await producer?.close();
    await redis?.quit();
  });

  it('never exceeds a tenant cap cluster-wide', async () => {
    const fairness = producer.get(TenantFairness);
    await fairness.setConcurrency('fair', 'capB', 3);
    const ids = [
      ...(await addWork('capA', 30, 40)),
      ...(await addWork('capB', 30, 40)),
      ...(await addWork('capC', 30, 40)),
    ];
    await waitFor(async () => (await redis.hlen(keys.done)) === ids.length, 'all 90 jobs', 30_000);
    const max = await redis.hgetall(keys.max);
    expect(Number(max.capA)).toBe(2);
    expect(Number(max.capB)).toBe(3);
    expect(Number(max.capC)).toBe(2);
    const runners = new Set(Object.values(await redis.hgetall(keys.runner)));
    expect(runners.size).toBe(3);
  });

  it('completes every job exactly once when a worker is SIGKILLed mid-job, and frees its slots', async () => {
    const fairness = producer.get(TenantFairness);
    await fairness.setConcurrency('fair', 'killA', 3);
    await fairness.setConcurrency('fair', 'killB', 3);
    // 200 ms jobs: a few run in each process at any time, so the kill finds the victim mid-job.
    const ids = [...(await addWork('killA', 20, 200)), ...(await addWork('killB', 20, 200))];
    const victim = workers[0];
    await waitFor(async () => {
      const runner = await redis.hmget(keys.runner, ...ids);
      const running = await redis.hmget(keys.done, ...ids);
      return runner.some((pid, i) => pid === String(victim.pid) && running[i] === null);
    }, 'the victim to run a job');
    victim.kill('SIGKILL');
    await waitFor(
      async () => (await redis.hlen(keys.done)) >= 90 + ids.length,
      'all 40 jobs',
      40_000,
    );
    const done = await redis.hmget(keys.done, ...ids);
    expect(done.every((count) => count === '1')).toBe(true);
    await waitFor(
      async () =>
        (await fairness.getTenant('fair', 'killA')).inFlight === 0 &&
        (await fairness.getTenant('fair', 'killB')).inFlight === 0,
      'slots back',
    );
    const more = await addWork('killA', 6, 10);
    await waitFor(async () => {
      const counts = await redis.hmget(keys.done, ...more);
      return counts.every((count) => count === '1');
    }, 'jobs after the crash');
  }, 60_000);
});
