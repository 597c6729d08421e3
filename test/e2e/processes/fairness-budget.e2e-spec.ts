import type { ChildProcess } from 'node:child_process';
import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import type { Cluster } from 'ioredis';
import {
  InvalidTenantQueueOptionsError,
  TenantFairness,
  TenantQueueModule,
  TenantQueueRegistry,
} from '../../../lib';
import {
  BUDGET,
  BUDGET_QUEUES,
  BudgetJobData,
  budgetAppModule,
  budgetRecordKeys,
} from '../../fixtures/budget-app';
import { enqueue, many } from '../../support/jobs';
import { forkFixture, killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { TestRedisClient, isClusterRun, openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

const CAP = 3;

/** What Redis Cluster hashes of a key: the first non-empty `{...}`, else the whole key. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

async function boot(prefix: string, concurrency: number, redis: TestRedisClient) {
  const moduleRef = await bootTestModule({
    imports: [budgetAppModule(prefix, concurrency, () => redis)],
  });
  return moduleRef;
}

/** `count` jobs of `tenantId` on `queue`, each holding its slot `ms`; resolves with their ids. */
async function addWork(
  app: TestingModule,
  queue: string,
  tenantId: string,
  count: number,
  ms: number,
) {
  const added = await enqueue(app, queue, tenantId, many<BudgetJobData>(count, { ms }));
  return added.map((job) => job.id);
}

/** Samples a tenant's running count every 5 ms until stopped; returns the samples. */
function sample(redis: TestRedisClient, key: string, field: string) {
  const seen: number[] = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      seen.push(Number((await redis.hget(key, field)) ?? 0));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return async () => {
    on = false;
    await loop;
    return seen;
  };
}

describe('one budget across queues (real Redis)', () => {
  let redis: TestRedisClient;
  let moduleRef: TestingModule | undefined;
  beforeAll(() => {
    redis = openRedis();
  });
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });
  afterAll(async () => {
    await redis?.quit();
  });

  it("shares a tenant's cap across the budget's queues; another tenant and a queue without budget are unaffected", async () => {
    const prefix = uniquePrefix('bud');
    const keys = budgetRecordKeys(prefix);
    moduleRef = await boot(prefix, 10, redis);
    const fairness = moduleRef.get(TenantFairness);
    // Set on one queue of the budget, the cap is the budget's (and solo's own, separately).
    await fairness.setConcurrency('api-a', 'capped', CAP);
    await fairness.setConcurrency('solo', 'capped', CAP);
    expect((await fairness.getTenant('api-b', 'capped')).concurrency).toBe(CAP);
    const stop = sample(redis, keys.running, 'capped');
    const ids: string[] = [];
    for (const queue of BUDGET_QUEUES) {
      ids.push(...(await addWork(moduleRef, queue, 'capped', 40, 30)));
      ids.push(...(await addWork(moduleRef, queue, 'free', 40, 30)));
    }
    ids.push(...(await addWork(moduleRef, 'solo', 'capped', 30, 30)));
    await waitFor(async () => (await redis.hlen(keys.done)) === ids.length, 'all jobs', 40_000);
    const samples = await stop();
    const max = await redis.hgetall(keys.max);
    // Counted exactly (every handler start and end): never more than 3 across both queues, and 3.
    expect(Number(max.capped)).toBe(CAP);
    expect(Math.max(...samples)).toBeLessThanOrEqual(CAP);
    expect(samples.some((n) => n === CAP)).toBe(true);
    // Without a cap, a tenant runs on all the slots of both queues.
    expect(Number(max.free)).toBeGreaterThan(2 * CAP);
    // solo is not in the budget: its own cap of 3, alongside the budget's 3.
    expect(Number(max['capped@solo'])).toBe(CAP);
    // Both queues served the capped tenant.
    const done = Object.keys(await redis.hgetall(keys.done));
    for (const queue of BUDGET_QUEUES) {
      expect(done.filter((id) => id.startsWith(`${queue}|`)).length).toBe(80);
    }
    // Drained: the budget's shared count and holds are gone.
    const base = `{${prefix}:~budget:${BUDGET}}:~budget`;
    await waitFor(async () => (await redis.hlen(`${base}:inf`)) === 0, 'shared count back to 0');
    expect(await redis.hlen(`${base}:held`)).toBe(0);
    for (const queue of BUDGET_QUEUES) {
      expect((await fairness.getTenant(queue, 'capped')).inFlight).toBe(0);
    }
  }, 60_000);

  it("shares a tenant's rate limit: N starts per interval across both queues, not 2N", async () => {
    const prefix = uniquePrefix('bud');
    const keys = budgetRecordKeys(prefix);
    moduleRef = await boot(prefix, 10, redis);
    // 5 per second, burst 1: one start every 200 ms across the budget.
    await moduleRef.get(TenantFairness).setRateLimit('api-b', 'limited', { max: 5, per: 1000 });
    for (const queue of BUDGET_QUEUES) await addWork(moduleRef, queue, 'limited', 30, 1);
    const starts = async () => (await redis.lrange(keys.starts('limited'), 0, -1)).map(Number);
    await waitFor(async () => (await starts()).length > 0, 'a first start');
    const first = Math.min(...(await starts()));
    // BullMQ's timestamp of each start's job (set when the gate handed it over, on this machine).
    await waitFor(() => Date.now() > first + 2500, '2.5 s of starts', 10_000);
    const inTwoSeconds = (await starts()).filter((at) => at < first + 2000).length;
    // GCRA allows 1 + 2000 / 200 = 11 in 2 s (a little slack for the sender); per queue, 22.
    expect(inTwoSeconds).toBeLessThanOrEqual(13);
    expect(inTwoSeconds).toBeGreaterThanOrEqual(6);
  }, 30_000);

  it('puts every key of a budget queue under the budget hash tag; a queue without budget keeps its own', async () => {
    const prefix = uniquePrefix('bud');
    moduleRef = await boot(prefix, 0, redis);
    const registry = moduleRef.get(TenantQueueRegistry);
    const tag = `{${prefix}:~budget:${BUDGET}}`;
    const keys = [`${tag}:~budget:inf`];
    for (const queue of BUDGET_QUEUES) {
      const { bullPrefix, name } = registry.getQueue(queue).definition;
      expect(bullPrefix).toBe(`${tag}:${queue}`);
      keys.push(`${bullPrefix}:${name}:wait`, `${bullPrefix}:~fair:ready`, `${bullPrefix}:~id:x`);
    }
    expect(new Set(keys.map(hashTag))).toEqual(new Set([`${prefix}:~budget:${BUDGET}`]));
    if (isClusterRun()) {
      const node = (redis as Cluster).nodes('master')[0];
      const slots = await Promise.all(keys.map((key) => node.call('CLUSTER', 'KEYSLOT', key)));
      expect(new Set(slots).size).toBe(1);
    }
    expect(registry.getQueue('solo').definition.bullPrefix).toBe(`{${prefix}:solo}`);
  });

  it('refuses at bootstrap a budget without fairness and a bad budget name', async () => {
    const attempt = async (queues: Record<string, unknown>[]) => {
      @Module({
        imports: [
          ...testRootImports(uniquePrefix('bud')),
          ...queues.map((options) => TenantQueueModule.registerQueue(options as never)),
        ],
      })
      class BadModule {}
      let ref: TestingModule | undefined;
      try {
        ref = await bootTestModule({ imports: [BadModule] });
      } finally {
        await ref?.close().catch(() => undefined);
      }
    };
    await expect(attempt([{ name: 'q1', budget: 'b' }])).rejects.toThrow(
      /registerQueue\(q1\)\.budget.*needs fairness/,
    );
    await expect(attempt([{ name: 'q1', budget: 'a:b', fairness: true }])).rejects.toThrow(
      InvalidTenantQueueOptionsError,
    );
    // Queues of one budget with different default caps: see fair-budget.spec.ts (the first
    // queue is created by then, so a failed boot would leave its connection behind here).
  });
});

describe('one budget across queues, two worker processes (real Redis)', () => {
  const prefix = uniquePrefix('budmp');
  const keys = budgetRecordKeys(prefix);
  const base = `{${prefix}:~budget:${BUDGET}}:~budget`;
  const workers: ChildProcess[] = [];
  let producer: TestingModule;
  let redis: TestRedisClient;

  beforeAll(async () => {
    redis = openRedis();
    producer = await boot(prefix, 0, redis);
    const env = { TQ_PREFIX: prefix, TQ_CONCURRENCY: '10' };
    await Promise.all([
      forkFixture('budget-worker.ts', env, workers),
      forkFixture('budget-worker.ts', env, workers),
    ]);
  }, 60_000);

  afterAll(async () => {
    await killAll(workers);
    await producer?.close();
    await redis?.quit();
  });

  it('never runs more than the cap across both queues and both processes', async () => {
    await producer.get(TenantFairness).setConcurrency('api-a', 'capped', CAP);
    const stop = sample(redis, keys.running, 'capped');
    const ids: string[] = [];
    for (const queue of BUDGET_QUEUES) {
      ids.push(...(await addWork(producer, queue, 'capped', 30, 40)));
    }
    await waitFor(async () => (await redis.hlen(keys.done)) === ids.length, 'all jobs', 40_000);
    const samples = await stop();
    expect(Number(await redis.hget(keys.max, 'capped'))).toBe(CAP);
    expect(Math.max(...samples)).toBeLessThanOrEqual(CAP);
    const runners = new Set(Object.values(await redis.hgetall(keys.runner)));
    expect(runners.size).toBe(2);
    await waitFor(async () => (await redis.hlen(`${base}:inf`)) === 0, 'shared count back to 0');
  }, 60_000);

  it('keeps the shared count exact when a worker is SIGKILLed mid-job', async () => {
    await producer.get(TenantFairness).setConcurrency('api-b', 'killed', CAP);
    const victim = workers[0];
    const ids: string[] = [];
    for (const queue of BUDGET_QUEUES) {
      for (const id of await addWork(producer, queue, 'killed', 15, 300))
        ids.push(`${queue}|${id}`);
    }
    await waitFor(async () => {
      const runner = await redis.hmget(keys.runner, ...ids);
      const done = await redis.hmget(keys.done, ...ids);
      return runner.some((pid, i) => pid === String(victim.pid) && done[i] === null);
    }, 'the victim to run a job');
    victim.kill('SIGKILL');
    // The survivor's handlers, plus whatever the victim was running when it died (frozen).
    const live = async () => {
      const [total, dead] = await redis.hmget(keys.running, 'killed', `killed#${victim.pid}`);
      return Number(total ?? 0) - Number(dead ?? 0);
    };
    const seen: number[] = [];
    await waitFor(
      async () => {
        seen.push(await live());
        return (await redis.hmget(keys.done, ...ids)).every((count) => count !== null);
      },
      'all jobs after the kill',
      45_000,
    );
    expect(Math.max(...seen)).toBeLessThanOrEqual(CAP);
    const done = await redis.hmget(keys.done, ...ids);
    expect(done.every((count) => count !== null)).toBe(true);
    // The reaper freed the victim's slots: the shared count is back to 0 and new jobs run.
    await waitFor(async () => (await redis.hlen(`${base}:inf`)) === 0, 'shared count back to 0');
    const more = await addWork(producer, 'api-a', 'killed', 6, 10);
    await waitFor(async () => {
      const counts = await redis.hmget(keys.done, ...more.map((id) => `api-a|${id}`));
      return counts.every((count) => count !== null);
    }, 'jobs after the crash');
  }, 60_000);
});
