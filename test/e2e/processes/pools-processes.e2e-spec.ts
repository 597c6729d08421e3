import type { ChildProcess } from 'node:child_process';
import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { TenantQueueModule } from '../../../lib';
import { POOL_QUEUE, PoolJobData, poolRecordKeys } from '../../fixtures/pool-shared';
import { enqueue, many } from '../../support/jobs';
import { forkFixture, killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { sleep, waitFor } from '../../support/wait';

const prefix = uniquePrefix('pp');
const keys = poolRecordKeys(prefix);
const workers: ChildProcess[] = [];
const SHARED_TENANTS = ['alpha', 'beta', 'gamma'];
const FLOOD = 2_000;
const FLOOD_MS = 20;
let producer: TestingModule;
let redis: TestRedisClient;

function startWorker(pools: string): Promise<ChildProcess> {
  return forkFixture(
    'pool-worker.ts',
    { TQ_PREFIX: prefix, TQ_POOLS: pools, TQ_CONCURRENCY: '10' },
    workers,
  );
}

/** `count` imports of `tenantId`, each holding its slot `ms`, recorded under `phase`. */
function addImports(tenantId: string, count: number, ms: number, phase: string) {
  const data = many<PoolJobData>(count, { at: Date.now(), ms, phase });
  return enqueue(producer, 'imports', tenantId, data, undefined, 'import');
}

/** One job per shared tenant every `everyMs`, for `forMs`; returns how many were enqueued. */
async function trickle(phase: string, forMs: number, everyMs = 50): Promise<number> {
  const until = Date.now() + forMs;
  let count = 0;
  while (Date.now() < until) {
    await Promise.all(SHARED_TENANTS.map((tenant) => addImports(tenant, 1, 5, phase)));
    count += SHARED_TENANTS.length;
    await sleep(everyMs);
  }
  return count;
}

async function waits(phase: string): Promise<{ tenant: string; ms: number }[]> {
  return (await redis.lrange(keys.waits(phase), 0, -1)).map((entry) => {
    const [tenant, ms] = entry.split('|');
    return { tenant, ms: Number(ms) };
  });
}

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)];
}

describe('a dedicated pool in its own process (real Redis, two worker processes)', () => {
  beforeAll(async () => {
    redis = openRedis();
    @Module({
      imports: [...testRootImports(prefix), TenantQueueModule.registerQueue(POOL_QUEUE)],
    })
    class ProducerModule {}
    producer = await bootTestModule({ imports: [ProducerModule] });
    await Promise.all([startWorker('imports-flood'), startWorker('imports')]);
  }, 60_000);

  afterAll(async () => {
    await killAll(workers);
    await producer?.close();
    await redis?.quit();
  });

  it("keeps the shared tenants' waits near their baseline while the dedicated tenant floods", async () => {
    const [dedicated, shared] = workers.map((child) => String(child.pid));

    // Warm both processes up, then measure the shared tenants alone.
    const warm = await trickle('warm', 500);
    await waitFor(async () => (await redis.hlen(keys.done)) === warm, 'warm-up jobs');
    const base = await trickle('base', 3_000);
    await waitFor(async () => (await redis.hlen(keys.done)) === warm + base, 'baseline jobs');

    // The flood: 2,000 jobs of 20 ms for one tenant (4 s of work for its 10 slots), then the same
    // trickle as the baseline while it runs.
    const flood = await Promise.all(
      Array.from({ length: FLOOD / 500 }, () => addImports('flood', 500, FLOOD_MS, 'flood')),
    );
    expect(new Set(flood.flat().map((job) => job.queueName))).toEqual(new Set(['imports-flood']));
    const under = await trickle('under', 3_000);
    const floodDoneWhileTrickling = (await waits('flood')).length;
    await waitFor(
      async () => (await redis.hlen(keys.done)) === warm + base + FLOOD + under,
      'every job',
      60_000,
    );

    // The trickle really ran under the flood: the flood had not finished when it ended.
    expect(floodDoneWhileTrickling).toBeLessThan(FLOOD);

    // Each job ran once, and only in the process that consumes its pool.
    const done = await redis.hvals(keys.done);
    expect(done.every((count) => count === '1')).toBe(true);
    const runs = Object.values(await redis.hgetall(keys.runs)).map((entry) => entry.split('|'));
    const floodRuns = runs.filter(([, , tenant]) => tenant === 'flood');
    const sharedRuns = runs.filter(([, , tenant]) => tenant !== 'flood');
    expect(floodRuns).toHaveLength(FLOOD);
    expect(floodRuns.every(([pid, pool]) => pid === dedicated && pool === 'imports-flood')).toBe(
      true,
    );
    expect(sharedRuns.every(([pid, pool]) => pid === shared && pool === 'imports')).toBe(true);

    // Queueing behind the flood would add seconds (4 s of work ahead); what is left is CPU
    // contention on a shared machine, which 2x the baseline p95 plus 100 ms allows for.
    const baseP95 = p95((await waits('base')).map((w) => w.ms));
    const underP95 = p95((await waits('under')).map((w) => w.ms));
    console.log(
      `pools: shared tenants' wait p95 ${baseP95} ms alone, ${underP95} ms under a ${FLOOD}-job ` +
        `flood on the dedicated pool (${base} and ${under} jobs)`,
    );
    expect(underP95).toBeLessThanOrEqual(2 * baseP95 + 100);
  }, 120_000);
});
