import type { ChildProcess } from 'node:child_process';
import { TestingModule } from '@nestjs/testing';
import {
  InvalidTenantQueueOptionsError,
  TenantContext,
  TenantFairness,
  TenantQueueRegistry,
  TenantFairnessState,
} from '../../../lib';
import { FairJobData, Started, bootFairApp } from '../../fixtures/fairness-app';
import { LONG_JOB, SHORT_JOB, runsKey, timeShareOptions } from '../../fixtures/time-share-shared';
import { forkFixture, killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { sleep, waitFor } from '../../support/wait';

type Share = 'jobs' | 'time';

interface Run {
  prefix: string;
  producer: TestingModule;
  workers: ChildProcess[];
}

const runs = new Map<Share, Run>();
let redis: TestRedisClient;
const now = () => performance.timeOrigin + performance.now();

async function start(share: Share): Promise<void> {
  const prefix = uniquePrefix(`ts${share}`);
  const workers: ChildProcess[] = [];
  runs.set(share, { prefix, workers, producer: undefined as unknown as TestingModule });
  const env = { TQ_PREFIX: prefix, TQ_SHARE: share };
  const [producer] = await Promise.all([
    bootFairApp({ prefix, fairness: timeShareOptions(share), concurrency: 0 }),
    forkFixture('time-share-worker.ts', env, workers),
    forkFixture('time-share-worker.ts', env, workers),
  ]);
  runs.get(share)!.producer = producer;
}

/**
 * Tenant L's jobs take 100 ms, tenant S's 2 ms, equal weights, both backlogged, two worker
 * processes of concurrency 1. Returns each tenant's summed run time inside
 * [start + warmUpMs, start + warmUpMs + windowMs] (jobs cut at its edges count their part in it),
 * and each tenant's backlog when the window ends.
 */
/** A tenant's jobs still waiting: in the gate, or by turn in BullMQ's prioritized set. */
const waitingOf = (state: TenantFairnessState) => state.backlog + state.queuedByTurn;

async function measure(share: Share, warmUpMs: number, windowMs: number) {
  const { prefix, producer, workers } = runs.get(share)!;
  const queue = producer.get(TenantQueueRegistry).getQueue<{ ms: number }>('fair');
  const context = producer.get(TenantContext);
  const add = (tenant: string, name: string, ms: number, count: number) =>
    context.run(tenant, () =>
      queue.addBulk(Array.from({ length: count }, () => ({ name, data: { ms } }))),
    );
  await add('S', SHORT_JOB, 2, 2000);
  await add('L', LONG_JOB, 100, 200);
  for (let i = 0; i < 3; i++) await add('S', SHORT_JOB, 2, 2000);
  const from = now() + warmUpMs;
  const to = from + windowMs;
  await sleep(to - now());
  const fairness = producer.get(TenantFairness);
  const backlog = {
    L: waitingOf(await fairness.getTenant('fair', 'L')),
    S: waitingOf(await fairness.getTenant('fair', 'S')),
  };
  // A job running across the window's end is recorded when it ends.
  await sleep(500);
  await killAll(workers);
  const time = { L: 0, S: 0 };
  const jobs = { L: 0, S: 0 };
  for (const row of await redis.lrange(runsKey(prefix), 0, -1)) {
    const [tenant, begin, end] = row.split(' ');
    const part = Math.min(Number(end), to) - Math.max(Number(begin), from);
    if (part <= 0) continue;
    time[tenant as 'L' | 'S'] += part;
    jobs[tenant as 'L' | 'S']++;
  }
  return { time, jobs, backlog, shareOfL: time.L / (time.L + time.S) };
}

describe("fairness share 'time': each tenant gets its share of worker time (2 worker processes)", () => {
  beforeAll(async () => {
    redis = openRedis();
    await Promise.all([start('time'), start('jobs')]);
  }, 60_000);

  afterAll(async () => {
    for (const run of runs.values()) {
      await killAll(run.workers);
      await run.producer?.close();
    }
    await redis?.quit();
  });

  it("share 'time': 100 ms jobs and 2 ms jobs, both backlogged, get half of the time each (+-10%)", async () => {
    // The first ~1 s L is under-charged (its jobs are not measured yet) and S then catches up:
    // both are over ~2.5 s after the first start (5.5 s with 200 ms jobs), the window starts
    // 3 s after the adds. It holds 4 s: ~20 of L's jobs per process, as 8 s did of 200 ms jobs.
    const result = await measure('time', 3000, 4000);
    expect(result.backlog.L).toBeGreaterThan(0);
    expect(result.backlog.S).toBeGreaterThan(0);
    const total = result.time.L + result.time.S;
    expect(result.time.L).toBeGreaterThanOrEqual(0.45 * total);
    expect(result.time.L).toBeLessThanOrEqual(0.55 * total);
    expect(result.time.S).toBeGreaterThanOrEqual(0.45 * total);
    expect(result.time.S).toBeLessThanOrEqual(0.55 * total);
    // Half the time is many more short jobs than long ones.
    expect(result.jobs.S).toBeGreaterThan(20 * result.jobs.L);
  }, 40_000);

  it("share 'jobs' (the default), same setup: half the starts, so L takes far more than half the time", async () => {
    // 2 s: ~20 of L's jobs per process, as 4 s did of 200 ms jobs.
    const result = await measure('jobs', 500, 2000);
    expect(result.backlog.L).toBeGreaterThan(0);
    expect(result.backlog.S).toBeGreaterThan(0);
    expect(result.shareOfL).toBeGreaterThan(0.8);
    // The jobs-share gate keeps no run times.
    const base = `{${runs.get('jobs')!.prefix}:fair}:~fair`;
    expect(await redis.exists(`${base}:rt`, `${base}:rtn`)).toBe(0);
    expect(Math.abs(result.jobs.L - result.jobs.S)).toBeLessThanOrEqual(
      Math.max(4, 0.2 * result.jobs.L),
    );
  }, 30_000);
});

describe("fairness share 'time' beside lanes, caps, rate limits and weights (one process)", () => {
  const prefix = uniquePrefix('tsmix');
  const base = `{${prefix}:fair}:~fair`;
  const started: Started[] = [];
  let app: TestingModule;
  let client: TestRedisClient;

  beforeAll(async () => {
    client = openRedis();
    app = await bootFairApp({
      prefix,
      concurrency: 4,
      started,
      fairness: {
        share: 'time',
        defaultConcurrency: 2,
        rateLimit: { max: 100, per: 1000, burst: 20 },
        lanes: { a: { share: 0.5 }, b: { share: 0.5, jobs: [SHORT_JOB] } },
        tickMs: 200,
      },
    });
  });

  afterAll(async () => {
    await app?.close();
    await client?.quit();
  });

  it("runs every job, learns each name however it is spelled, and drops a tenant's record once it drains", async () => {
    await app.get(TenantFairness).setWeight('fair', 'y', 2);
    const queue = app.get(TenantQueueRegistry).getQueue<FairJobData>('fair');
    const context = app.get(TenantContext);
    const odd = 'b "\\ \u2028 \u00fcn\u00ef\u0001';
    const jobs = [
      ...Array.from({ length: 6 }, () => ({ name: LONG_JOB, data: { ms: 20 } })),
      ...Array.from({ length: 6 }, () => ({ name: SHORT_JOB, data: { ms: 2 } })),
      ...Array.from({ length: 4 }, () => ({ name: odd, data: { ms: 5 }, opts: { lane: 'b' } })),
      { name: odd, data: { ms: 5, fail: true } },
      { name: odd, data: { ms: 5, cancel: true } },
    ];
    for (const tenant of ['x.1', 'y']) await context.run(tenant, () => queue.addBulk(jobs));
    await waitFor(async () => {
      const states = await Promise.all(
        ['x.1', 'y'].map((t) => app.get(TenantFairness).getTenant('fair', t)),
      );
      // The failing job is retried (BullMQ's attempts): more starts than jobs.
      return (
        started.length >= 2 * jobs.length &&
        states.every((st) => st.inFlight === 0 && st.backlog === 0)
      );
    }, 'every job to end');
    // Drained tenants leave no run-time record; the names' averages stay, each name once.
    expect(await client.hlen(`${base}:rt`)).toBe(0);
    const names = await client.hgetall(`${base}:rtn`);
    const spelled = (name: string) => JSON.stringify(name).slice(1, -1);
    expect(Object.keys(names).sort()).toEqual([LONG_JOB, SHORT_JOB, odd].map(spelled).sort());
    expect(Number(names[spelled(LONG_JOB)])).toBeGreaterThan(Number(names[spelled(SHORT_JOB)]));
  });
});

describe('fairness.share is checked at bootstrap', () => {
  it('refuses a value other than jobs or time, naming the field and the allowed values', async () => {
    const boot = bootFairApp({
      prefix: uniquePrefix('tsbad'),
      fairness: { share: 'cpu' as never },
      concurrency: 0,
    });
    await expect(boot).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(boot).rejects.toThrow(/registerQueue\(fair\)\.fairness\.share.*'jobs' or 'time'/);
  });
});
