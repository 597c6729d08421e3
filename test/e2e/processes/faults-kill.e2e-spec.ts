import { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import IORedis from 'ioredis';
import { ClsModule } from 'nestjs-cls';
import { Registry } from 'prom-client';
import {
  DeadLetters,
  TenantFairness,
  TenantQueueInspector,
  TenantQueueModule,
  TenantQueueRegistry,
} from '../../../lib';
import { FAULTS_FAIRNESS, faultsConnection } from '../../fixtures/faults-shared';
import { enqueue } from '../../support/jobs';
import { compileFixtures, forkCompiled } from '../../support/compiled-fixtures';
import { killAll } from '../../support/processes';
import { freePort } from '../../support/redis-server';
import { isClusterRun } from '../../support/test-redis';
import { uniquePrefix } from '../../support/redis-url';
import { sleep, waitFor } from '../../support/wait';

const TENANTS = ['acme', 'globex', 'initech'];
const FIXTURE = 'test/fixtures/faults-worker.ts';
/** The worker fixture in plain JavaScript: a dozen processes boot without ts-node. */
let compiled: string;
beforeAll(() => {
  compiled = compileFixtures([
    FIXTURE,
    'test/fixtures/faults-shared.ts',
    'test/support/processes.ts',
  ]);
});
afterAll(() => rmSync(compiled, { recursive: true, force: true }));

/** The producer side of the fault tests: the fair queue, no worker, the inspector. */
async function bootProducer(prefix: string): Promise<TestingModule> {
  @Module({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({
        connection: faultsConnection(),
        prefix,
        metrics: { registry: new Registry(), flushIntervalMs: 100, gaugeIntervalMs: 0 },
      }),
      TenantQueueModule.registerQueue({ name: 'faults', fairness: FAULTS_FAIRNESS }),
    ],
  })
  class FaultsProducerModule {}
  const moduleRef = await Test.createTestingModule({ imports: [FaultsProducerModule] }).compile();
  await moduleRef.init();
  return moduleRef;
}

/** `perTenant` jobs of `ms` for each tenant; their ids, by the tenant they belong to. */
async function enqueueAll(
  moduleRef: TestingModule,
  perTenant: number,
  ms: number,
  opts: { attempts?: number } = {},
) {
  const ids = new Map<string, string>();
  for (const tenantId of TENANTS) {
    const data = Array.from({ length: perTenant }, (_, n) => ({ ms, n }));
    for (const job of await enqueue(moduleRef, 'faults', tenantId, data, opts, 'n')) {
      ids.set(job.id!, tenantId);
    }
  }
  return ids;
}

/**
 * Every enqueued job ended (completed, failed, or dead-lettered: nothing lost); then the gate's
 * backlogs and in-flight counts are 0 and the inspector says exactly that.
 */
async function expectSettled(moduleRef: TestingModule, ids: Map<string, string>) {
  const bull = moduleRef.get(TenantQueueRegistry).getQueue('faults').bullQueue;
  const deadLetters = moduleRef.get(DeadLetters);
  const ended = async () => {
    let done = 0;
    for (const [id, tenantId] of ids) {
      const state = await bull.getJobState(id);
      if (state === 'completed' || state === 'failed') done++;
      else if (state === 'unknown' && (await deadLetters.get(tenantId, id))) done++;
    }
    return done;
  };
  // Reads fail while the producer's client reconnects after a Redis restart: read again.
  await waitFor(
    async () => (await ended().catch(() => -1)) === ids.size,
    'every job to end',
    60_000,
  );
  expect(await ended()).toBe(ids.size);

  const fairness = moduleRef.get(TenantFairness);
  await waitFor(
    async () => {
      for (const tenantId of TENANTS) {
        const state = await fairness.getTenant('faults', tenantId);
        if (state.backlog !== 0 || state.inFlight !== 0) return false;
      }
      return true;
    },
    "the gate's slots of the killed processes to come back",
    20_000,
  );
  const inspector = moduleRef.get(TenantQueueInspector);
  const listed = await inspector.listTenants({ queue: 'faults' });
  expect(listed.map((s) => s.tenantId).sort()).toEqual(TENANTS);
  for (const stats of listed) {
    expect(stats).toMatchObject({
      source: 'fair-gate',
      backlog: 0,
      inFlight: 0,
      oldestWaitingMs: 0,
    });
    const own = [...ids.values()].filter((t) => t === stats.tenantId).length;
    // Every job started once at least; a start counted by a process killed before it wrote its
    // counts is lost with it, never counted twice.
    expect(stats.lag.samples).toBeLessThanOrEqual(own);
    expect(stats.results.completed + stats.results.deadLettered).toBeLessThanOrEqual(own);
  }
  expect(await bull.getActiveCount()).toBe(0);
  expect(await bull.getWaitingCount()).toBe(0);
}

describe('faults with real processes: SIGKILLed workers, a Redis restart', () => {
  const children: ChildProcess[] = [];
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await killAll(children);
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('loses nothing over 10 SIGKILLs of a worker mid-job, and the inspector ends exact', async () => {
    const prefix = uniquePrefix('kill');
    moduleRef = await bootProducer(prefix);
    const redis = new IORedis({ ...faultsConnection(), maxRetriesPerRequest: null });
    const startsIn = async (pid: number) => Number(await redis.get(`${prefix}:test:starts:${pid}`));
    /** A worker, SIGKILLed right after its second start: jobs are running in it. */
    const killMidJob = async () => {
      const worker = await forkCompiled(compiled, FIXTURE, { TQ_PREFIX: prefix }, children);
      await waitFor(
        async () => (await startsIn(worker.pid!)) >= 2,
        'the worker to start jobs',
        45_000,
      );
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.kill('SIGKILL');
      await exited;
    };
    try {
      const ids = await enqueueAll(moduleRef, 40, 300);
      // Two waves of five processes (booting together, so a loaded machine boots them at once).
      for (let wave = 0; wave < 2; wave++) await Promise.all(Array.from({ length: 5 }, killMidJob));
      expect(children.filter((child) => child.signalCode === 'SIGKILL')).toHaveLength(10);
      // The survivor runs what is left at the gate's cap (3 for each of the 3 tenants).
      await forkCompiled(compiled, FIXTURE, { TQ_PREFIX: prefix, TQ_CONCURRENCY: '9' }, children);
      await expectSettled(moduleRef, ids);
    } finally {
      await redis.quit();
    }
  }, 150_000);

  const restart = isClusterRun() ? it.skip : it;

  /**
   * A redis-server of its own with an append-only file (fsync always) on a free port, that
   * `kill` SIGKILLs and `start` starts again on the same file; REDIS_URL points at it meanwhile.
   */
  async function ownRedis() {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'tq-aof-'));
    const url = `redis://127.0.0.1:${port}`;
    const previous = process.env.REDIS_URL;
    process.env.REDIS_URL = url;
    let server: ChildProcess | undefined;
    const start = async () => {
      server = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''].concat([
          '--appendonly',
          'yes',
          '--appendfsync',
          'always',
        ]),
        { stdio: 'ignore' },
      );
      const probe = new IORedis({
        host: '127.0.0.1',
        port,
        lazyConnect: true,
        retryStrategy: () => 50,
      });
      await waitFor(
        () =>
          probe.ping().then(
            () => true,
            () => false,
          ),
        'redis-server to answer',
        10_000,
      );
      probe.disconnect();
    };
    const stop = async (signal: NodeJS.Signals) => {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server!.kill(signal);
      await exited;
    };
    await start();
    return {
      url,
      start,
      /** A crash of Redis: everything acknowledged is in the append-only file. */
      kill: () => stop('SIGKILL'),
      async close() {
        if (previous === undefined) delete process.env.REDIS_URL;
        else process.env.REDIS_URL = previous;
        await stop('SIGTERM');
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  restart(
    'loses nothing when Redis (appendonly) restarts mid-run',
    async () => {
      const server = await ownRedis();
      try {
        const prefix = uniquePrefix('aof');
        moduleRef = await bootProducer(prefix);
        const redis = new IORedis({ ...faultsConnection(), maxRetriesPerRequest: null });
        const starts = async () => Number(await redis.get(`${prefix}:test:starts`).catch(() => 0));
        await forkCompiled(
          compiled,
          FIXTURE,
          { TQ_PREFIX: prefix, REDIS_URL: server.url },
          children,
        );
        const ids = await enqueueAll(moduleRef, 30, 100);
        await waitFor(async () => (await starts()) >= 15, 'the first jobs to run', 20_000);

        await server.kill();
        await sleep(500);
        await server.start();
        for (const [id, tenantId] of await enqueueAll(moduleRef, 10, 100)) ids.set(id, tenantId);
        await expectSettled(moduleRef, ids);
        await redis.quit();
      } finally {
        await killAll(children);
        await moduleRef?.close();
        moduleRef = undefined;
        await server.close();
      }
    },
    150_000,
  );

  // Issue 22, item 2: the hand-over to BullMQ failed on the lost connection ("Stream isn't
  // writeable and enableOfflineQueue options is false"), which the gate took for BullMQ refusing
  // the jobs: 17-119 of 200 ended failed, attemptsMade 1, never run. A plain queue lost none.
  restart(
    'fails no job that never ran when Redis is SIGKILLed and restarted on a fair queue (attempts: 3)',
    async () => {
      const server = await ownRedis();
      try {
        const prefix = uniquePrefix('aof3');
        moduleRef = await bootProducer(prefix);
        const redis = new IORedis({ ...faultsConnection(), maxRetriesPerRequest: null });
        redis.on('error', () => undefined);
        const starts = async () => Number(await redis.get(`${prefix}:test:starts`).catch(() => 0));
        await forkCompiled(
          compiled,
          FIXTURE,
          { TQ_PREFIX: prefix, REDIS_URL: server.url },
          children,
        );
        const ids = await enqueueAll(moduleRef, 67, 40, { attempts: 3 });
        await waitFor(async () => (await starts()) >= 1, 'the first job to run', 20_000);
        // 0.5-1.5 s into the run, as the report did it; restarted 1 s later.
        await sleep(500 + Math.floor(Math.random() * 1000));
        await server.kill();
        await sleep(1000);
        await server.start();
        await expectSettled(moduleRef, ids);
        const bull = moduleRef.get(TenantQueueRegistry).getQueue('faults').bullQueue;
        const failed = await bull.getFailed();
        expect(failed.map((job) => `${job.id}: ${job.failedReason}`)).toEqual([]);
        expect(await bull.getCompletedCount()).toBe(ids.size);
        await redis.quit();
      } finally {
        killAll(children);
        await moduleRef?.close();
        moduleRef = undefined;
        await server.close();
      }
    },
    150_000,
  );
});
