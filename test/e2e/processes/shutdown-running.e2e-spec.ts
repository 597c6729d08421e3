import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { EnqueuedJob, TenantFairness, TenantQueueModule, TenantQueueRegistry } from '../../../lib';
import { BULLMQ_VERSION } from '../../../lib/core/bullmq';
import { longQueue, shutdownKeys } from '../../fixtures/shutdown-shared';
import { AppProcess, Fixture } from '../../support/app-process';
import { enqueue, many } from '../../support/jobs';
import { compiledFixture } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

jest.setTimeout(180_000);

/** Slack over a bound for a process on a loaded 2-core machine. */
const SLACK_MS = 15_000;

let fixture: Fixture;
let redis: TestRedisClient;
const apps: AppProcess[] = [];
let producer: TestingModule | undefined;

beforeAll(async () => {
  fixture = await compiledFixture('shutdown-worker.ts');
  redis = openRedis();
}, 120_000);

/** Kills every worker process and closes the producer. */
async function stopAll() {
  apps.forEach((app) => app.kill());
  await Promise.all(apps.map((app) => app.exited));
  apps.length = 0;
  await producer?.close();
  producer = undefined;
}

afterAll(() => redis?.quit());

/** The producer side: queue `long` as the workers declare it, no worker. */
async function bootProducer(prefix: string, cap: string | undefined) {
  @Module({
    imports: [...testRootImports(prefix), TenantQueueModule.registerQueue(longQueue(cap))],
  })
  class ProducerModule {}
  producer = await bootTestModule({ imports: [ProducerModule] });
  return producer;
}

/** A worker process, resolved once it is ready. */
async function startWorker(env: Record<string, string>): Promise<AppProcess> {
  const app = new AppProcess(fixture, env);
  apps.push(app);
  await app.waitEvent('ready', 'the worker to boot');
  return app;
}

/** How the process ended, if it did within `ms`. */
async function exitWithin(app: AppProcess, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((done) => (timer = setTimeout(() => done(undefined), ms)));
  try {
    return await Promise.race([app.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until acme and globex hold no slot. */
async function slotsBack() {
  const fairness = producer!.get(TenantFairness);
  await waitFor(
    async () =>
      (await fairness.getTenant('long', 'acme')).inFlight === 0 &&
      (await fairness.getTenant('long', 'globex')).inFlight === 0,
    'every slot to come back',
    30_000,
  );
}

const starts = (app: AppProcess) => app.events.filter((event) => 'start' in event);
const ends = (app: AppProcess) => app.events.filter((event) => 'end' in event);

/** Each job's BullMQ state, by id. */
async function states(ids: string[]): Promise<Record<string, string>> {
  const bull = producer!.get(TenantQueueRegistry).getQueue('long').bullQueue;
  const out: Record<string, string> = {};
  for (const id of ids) out[id] = await bull.getJobState(id);
  return out;
}

/**
 * A worker process (TQ_MODE `mode`, shutdownTimeoutMs `shutdownMs`) and two jobs of `ms` for acme
 * and for globex (cap 2 each), resolved once the four run in it; then `waiting` more jobs
 * (`data`) for each, which the gate holds behind them. The waiting jobs are added once the four
 * run: they may be short (their run is not what is checked), and none of them is among the four.
 */
async function fourRunning(
  prefix: string,
  mode: 'hooks' | 'close',
  shutdownMs: string,
  running: { ms: number; againMs?: number },
  waiting: number,
  data: { ms: number },
) {
  const env = { TQ_PREFIX: prefix, TQ_CAP: '2', TQ_MODE: mode, TQ_SHUTDOWN_MS: shutdownMs };
  await bootProducer(prefix, '2');
  const worker = await startWorker(env);
  const ids: string[] = [];
  for (const tenantId of ['acme', 'globex']) {
    for (const job of await enqueue(producer!, 'long', tenantId, many(2, running))) {
      ids.push(job.id);
    }
  }
  await waitFor(() => starts(worker).length === 4, 'four jobs to start', 60_000);
  for (const tenantId of ['acme', 'globex']) {
    for (const job of await enqueue(producer!, 'long', tenantId, many(waiting, data))) {
      ids.push(job.id);
    }
  }
  return { env, worker, ids };
}

describe('shutdown with jobs running (real worker processes, fair queue capped at 2)', () => {
  afterEach(stopAll);

  it('SIGTERM with enableShutdownHooks: running jobs finish, none starts after, the process exits, their slots come back', async () => {
    const prefix = uniquePrefix('sdhooks');
    const { env, worker, ids } = await fourRunning(prefix, 'hooks', '30000', { ms: 2500 }, 4, {
      ms: 500,
    });
    const running = starts(worker).map((event) => event.start as string);
    await worker.terminate();
    const exit = await worker.exited;
    expect(exit.signal ?? exit.code).toBe('SIGTERM');
    const closing = worker.event('closing')!.at as number;
    // What ran finished; nothing started once the shutdown began.
    expect(
      ends(worker)
        .map((event) => event.end)
        .sort(),
    ).toEqual([...running].sort());
    expect(starts(worker).filter((event) => (event.at as number) >= closing)).toEqual([]);
    expect(worker.output).not.toMatch(/ERROR|did not finish within/);
    const after = await states(ids);
    expect(running.map((id) => after[id])).toEqual(running.map(() => 'completed'));

    // Their slots came back (a release still in flight at the close: by the next live process's
    // tick) and went to each tenant's next jobs, waiting in BullMQ.
    const bull = producer!.get(TenantQueueRegistry).getQueue('long').bullQueue;
    expect(await bull.getActiveCount()).toBe(0);
    // The rest runs in the next process, each job once, the cap held.
    await startWorker(env);
    const keys = shutdownKeys(prefix);
    await waitFor(
      async () => (await redis.hlen(keys.done)) === ids.length,
      'every job to complete',
      120_000,
    );
    expect(new Set(Object.values(await redis.hgetall(keys.done)))).toEqual(new Set(['1']));
    expect(await redis.hgetall(keys.max)).toEqual({ acme: '2', globex: '2' });
    await slotsBack();
  });

  it('app.close() without shutdown hooks, jobs longer than the bound: close ends at the bound, the cut jobs run again once elsewhere, the process ends by itself', async () => {
    const prefix = uniquePrefix('sdclose');
    // Cut at the bound, each runs again elsewhere in 300 ms (its first run's 8 s is what the bound
    // cuts).
    const { env, worker, ids } = await fourRunning(
      prefix,
      'close',
      '2000',
      { ms: 8000, againMs: 300 },
      1,
      { ms: 300 },
    );
    const cut = starts(worker).map((event) => event.start as string);
    const other = await startWorker(env);
    const sent = Date.now();
    worker.signal('SIGUSR2'); // the fixture calls app.close(), and nothing else

    await worker.waitEvent('closed', 'app.close() to return', 2000 + SLACK_MS);
    expect(worker.event('closed')!.at as number).toBeLessThan(sent + 2000 + SLACK_MS);
    expect(worker.output).toMatch(/did not finish within shutdownTimeoutMs \(\d+ ms\)/);
    // The cut handlers still run (their timers), then the process ends by itself.
    const exit = await exitWithin(worker, 8000 + SLACK_MS * 2);
    expect([exit?.code, worker.output.slice(-3000)]).toEqual([0, worker.output.slice(-3000)]);
    expect(starts(worker).filter((event) => (event.at as number) >= sent)).toEqual([]);

    // Every job completed in BullMQ: a cut handler's own end (its timer ran on) counts in the
    // fixture's `done` but not in BullMQ, which took the job back; its rerun in the other
    // process may still be running then (under load, seen once in CI).
    await waitFor(
      async () => Object.values(await states(ids)).every((state) => state === 'completed'),
      'every job to complete in BullMQ',
      120_000,
    );
    // The cut jobs ran again in the other process.
    const again = starts(other).filter((event) => cut.includes(event.start as string));
    expect(again.map((event) => event.start).sort()).toEqual([...cut].sort());
    await slotsBack();
    expect(other.output).not.toMatch(/ERROR/);
  });
});

// Not on the bullmq 5 run: what it changes here is covered there by narrower specs (the release's
// read of BullMQ's lock key by fairness-bullmq-ops, BullMQ 5's lock errors by lock-lost), and
// these two cases take half a minute of real stalls.
const onBullMq6 = BULLMQ_VERSION.startsWith('5.') ? describe.skip : describe;

onBullMq6(
  'a handler that blocks the event loop past its lock (stalled), two worker processes, cap 1',
  () => {
    // One run for both cases: a job of acme blocks its process's event loop 4 s (its lock is
    // 1.5 s), so the other process runs it again while the blocked one still believes it runs it.
    const prefix = uniquePrefix('sdstall');
    const keys = shutdownKeys(prefix);
    let workers: AppProcess[];
    let blocked: EnqueuedJob;
    let rest: EnqueuedJob[];

    beforeAll(async () => {
      const env = { TQ_PREFIX: prefix, TQ_CAP: '1', TQ_MODE: 'hooks', TQ_SHUTDOWN_MS: '5000' };
      await bootProducer(prefix, '1');
      workers = await Promise.all([startWorker(env), startWorker(env)]);
      // The rerun (4 s) still runs when the blocked run ends: its end reaches BullMQ then.
      [blocked] = await enqueue(producer!, 'long', 'acme', [{ blockMs: 4000, ms: 4000 }]);
      rest = await enqueue(producer!, 'long', 'acme', many(4, { ms: 1000 }));
      // Another tenant's jobs once the blocked process is stuck: fetched by it before, one would
      // stall with it and run twice (BullMQ's at-least-once, not the cap).
      await waitFor(
        async () => Number(await redis.hget(keys.starts, blocked.id)) === 2,
        'the stalled job to run again',
        60_000,
      );
      await enqueue(producer!, 'long', 'globex', many(2, { ms: 100 }));
      await waitFor(
        async () => (await redis.hlen(keys.done)) === 7,
        'every job to complete',
        120_000,
      );
    }, 180_000);

    afterAll(stopAll);

    it('runs again in its own tenant, once more only, and the cap holds throughout', async () => {
      const events = workers.flatMap((app) => app.events);
      expect(events.filter((event) => 'wrongTenant' in event)).toEqual([]);
      expect(Number(await redis.hget(keys.starts, blocked.id))).toBe(2);
      expect(await redis.hgetall(keys.max)).toEqual({ acme: '1', globex: '1' });
      expect(Object.values(await states([blocked.id, ...rest.map((job) => job.id)]))).toEqual(
        Array(5).fill('completed'),
      );
      const fairness = producer!.get(TenantFairness);
      await waitFor(
        async () => (await fairness.getTenant('long', 'acme')).inFlight === 0,
        'the slot to come back',
        30_000,
      );
    });

    it("logs one warning for the run that lost its lock, naming the job and what to do, not BullMQ's two errors", async () => {
      const zombie = workers.find((app) => app.event('unblocked'))!;
      // Its end reached BullMQ at the unblock, before the rerun (4 s) ended.
      await waitFor(() => zombie.output.includes('lost its lock'), 'the warning', 30_000);
      const lines = zombie.output
        .split('\n')
        .filter((line) => line.includes(blocked.id) && !line.startsWith('{'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `WARN.*job=${blocked.id} .*worker long: job ${blocked.id} lost its lock: .*lockDuration \\(1500 ms\\).*Raise the processor's lockDuration`,
        ),
      );
      expect(zombie.output).not.toMatch(/ERROR/);
    });
  },
);
