import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { TestingModule } from '@nestjs/testing';
import { TenantContext, TenantFairness, TenantQueueRegistry } from '../../../lib';
import { bootFairApp } from '../../fixtures/fairness-app';
import { FAIR_TEST_OPTIONS, recordKeys } from '../../fixtures/fairness-shared';
import { compileFixtures, forkCompiled } from '../../support/compiled-fixtures';
import { killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

const prefix = uniquePrefix('mp');
const keys = recordKeys(prefix);
const workers: ChildProcess[] = [];
let producer: TestingModule;
let redis: TestRedisClient;
let compiled: string;

const WORKER = 'test/fixtures/fairness-worker.ts';

/** A worker process in plain Node (the library transpiled once, not by ts-node in each). */
function startWorker(): Promise<ChildProcess> {
  return forkCompiled(compiled, WORKER, { TQ_PREFIX: prefix, TQ_CONCURRENCY: '3' }, workers);
}

async function enqueue(tenantId: string, count: number, ms: number): Promise<string[]> {
  const queue = producer.get(TenantQueueRegistry).getQueue<{ ms: number }>('fair');
  const jobs = Array.from({ length: count }, () => ({ name: 'work', data: { ms } }));
  const added = await producer.get(TenantContext).run(tenantId, () => queue.addBulk(jobs));
  return added.map((job) => job.id);
}

describe('fair gate across three worker processes (real Redis)', () => {
  beforeAll(async () => {
    compiled = compileFixtures([
      WORKER,
      'test/fixtures/fairness-shared.ts',
      'test/support/processes.ts',
      'test/support/test-module.ts',
      'test/support/test-redis.ts',
      'test/support/redis-url.ts',
    ]);
    redis = openRedis();
    producer = await bootFairApp({ prefix, fairness: FAIR_TEST_OPTIONS, concurrency: 0 });
    await Promise.all([startWorker(), startWorker(), startWorker()]);
  }, 60_000);

  afterAll(async () => {
    await killAll(workers);
    await producer?.close();
    await redis?.quit();
    if (compiled) rmSync(compiled, { recursive: true, force: true });
  });

  it('never exceeds a tenant cap cluster-wide', async () => {
    const fairness = producer.get(TenantFairness);
    await fairness.setConcurrency('fair', 'capB', 3);
    const ids = [
      ...(await enqueue('capA', 30, 40)),
      ...(await enqueue('capB', 30, 40)),
      ...(await enqueue('capC', 30, 40)),
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
    const ids = [...(await enqueue('killA', 20, 400)), ...(await enqueue('killB', 20, 400))];
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
    const more = await enqueue('killA', 6, 10);
    await waitFor(async () => {
      const counts = await redis.hmget(keys.done, ...more);
      return counts.every((count) => count === '1');
    }, 'jobs after the crash');
  }, 60_000);
});
