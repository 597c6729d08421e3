import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import IORedis from 'ioredis';
import {
  EnqueueUnavailableError,
  InvalidJobOptionsError,
  TenantBacklogFullError,
  TenantContext,
  TenantFairness,
  TenantQueue,
  TenantQueueModule,
  TenantQueueModuleOptions,
  TenantQueueRegistry,
} from '../../../lib';
import { bootProducerApp, ProducerApp } from '../../fixtures/producer-app';
import { hasRedisServer, startRedis, StartedRedis } from '../../support/redis-server';
import { uniquePrefix } from '../../support/redis-url';
import { isClusterRun, openRedis, TestRedisClient } from '../../support/test-redis';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

describe('a call refused after its id claim leaves no claim', () => {
  let app: TestingModule;
  let redis: TestRedisClient;
  let tenant: TenantContext;
  let capped: TenantQueue<any>;
  let plain: TenantQueue<any>;
  const prefix = uniquePrefix('claims');
  const ownerKey = (queue: string, id: string) => `{${prefix}:${queue}}:~id:${id}`;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(prefix),
        TenantQueueModule.registerQueue({ name: 'capped', fairness: { maxBacklog: 1 } }),
        TenantQueueModule.registerQueue({ name: 'plain' }),
        TenantQueueModule.registerQueue({ name: 'limited', defaultJobOptions: { sizeLimit: 200 } }),
      ],
    })
    class ClaimsModule {}
    app = await bootTestModule({ imports: [ClaimsModule] });
    redis = openRedis();
    tenant = app.get(TenantContext);
    capped = app.get(TenantQueueRegistry).getQueue('capped');
    plain = app.get(TenantQueueRegistry).getQueue('plain');
  });

  afterAll(async () => {
    await app.close();
    await redis.quit();
  });

  it('TenantBacklogFullError: "order-77" stays free for another tenant', async () => {
    // acme's backlog holds its one job: acme is paused, so nothing is admitted (no consumer either).
    await app.get(TenantFairness).pause('capped', 'acme');
    await tenant.run('acme', () => capped.add('x', {}, { jobId: 'order-76' }));
    await expect(
      tenant.run('acme', () => capped.add('x', {}, { jobId: 'order-77' })),
    ).rejects.toBeInstanceOf(TenantBacklogFullError);
    await expect(
      tenant.run('acme', () =>
        capped.addBulk([
          { name: 'x', data: {}, opts: { jobId: 'order-78' } },
          { name: 'x', data: {}, opts: { jobId: 'order-79' } },
        ]),
      ),
    ).rejects.toBeInstanceOf(TenantBacklogFullError);
    // Released after the answer (fire and forget on the same connection): look once it is in.
    await waitFor(
      async () =>
        (await redis.exists(
          ownerKey('capped', 'order-77'),
          ownerKey('capped', 'order-78'),
          ownerKey('capped', 'order-79'),
        )) === 0,
      'the refused claims to be released',
    );
    expect(await redis.exists(ownerKey('capped', 'order-76'))).toBe(1);
    const taken = await tenant.run('globex', () => capped.add('x', {}, { jobId: 'order-77' }));
    expect(taken.id).toBe('order-77');
    // acme's own claim, made before the refused calls, is kept: globex cannot take order-76.
    await expect(
      tenant.run('globex', () => capped.add('x', {}, { jobId: 'order-76' })),
    ).rejects.toThrow(/already used/);
  });

  it("a bulk of 1,200 ids refused in its second chunk of 500 (another tenant's id) releases the first chunk's claims", async () => {
    await tenant.run('globex', () => plain.add('x', {}, { jobId: 'bulk-550' }));
    const jobs = Array.from({ length: 1200 }, (_, i) => ({
      name: 'x',
      data: {},
      opts: { jobId: `bulk-${i}` },
    }));
    await expect(tenant.run('acme', () => plain.addBulk(jobs))).rejects.toThrow(/already used/);
    await waitFor(
      async () =>
        (await redis.exists(ownerKey('plain', 'bulk-10'), ownerKey('plain', 'bulk-499'))) === 0,
      "the first chunk's claims to be released",
    );
    // No job was written, so another tenant may use an id of the refused bulk's first chunk.
    expect(await plain.bullQueue.getJob('bulk-10')).toBeUndefined();
    const taken = await tenant.run('initech', () => plain.add('x', {}, { jobId: 'bulk-10' }));
    expect(taken.id).toBe('bulk-10');
  });

  it("defaultJobOptions' sizeLimit refuses an add without options as one with them: InvalidJobOptionsError, nothing written", async () => {
    const limited = app.get(TenantQueueRegistry).getQueue('limited');
    const big = { blob: 'x'.repeat(1000) };
    for (const opts of [undefined, {}]) {
      await expect(tenant.run('acme', () => limited.add('big', big, opts))).rejects.toBeInstanceOf(
        InvalidJobOptionsError,
      );
      await expect(
        tenant.run('acme', () => limited.addBulk([{ name: 'big', data: big, opts }])),
      ).rejects.toBeInstanceOf(InvalidJobOptionsError);
    }
    const counts = await limited.bullQueue.getJobCounts();
    expect(Object.values(counts).reduce((sum, n) => sum + n, 0)).toBe(0);
  });

  it('a bulk refused after the claim (a missing parent) releases its ids, keeps older claims', async () => {
    await tenant.run('acme', () => plain.add('x', {}, { jobId: 'kept-1' }));
    await expect(
      tenant.run('acme', () =>
        plain.addBulk([
          { name: 'x', data: {}, opts: { jobId: 'kept-1' } },
          { name: 'x', data: {}, opts: { jobId: 'child-1', parent: { id: 'no', queue: 'q' } } },
        ]),
      ),
    ).rejects.toBeInstanceOf(InvalidJobOptionsError);
    await waitFor(
      async () => (await redis.exists(ownerKey('plain', 'child-1'))) === 0,
      'the claim of child-1 to be released',
    );
    expect(await redis.exists(ownerKey('plain', 'kept-1'))).toBe(1);
  });
});

const withOwnServer = hasRedisServer() && !isClusterRun() ? describe : describe.skip;
const BOUND_MS = 1000;

withOwnServer('adds refused while Redis is paused leave no claim once it resumes', () => {
  let server: StartedRedis;
  let p: ProducerApp;
  let admin: IORedis;

  beforeAll(async () => {
    server = await startRedis();
    admin = new IORedis({ host: '127.0.0.1', port: server.port });
    const root = {
      connection: { host: '127.0.0.1', port: server.port },
      enqueueTimeoutMs: BOUND_MS,
    } as unknown as Omit<TenantQueueModuleOptions, 'connection' | 'prefix'>;
    p = await bootProducerApp('paused', root);
  });

  afterAll(async () => {
    await p?.close();
    await admin?.quit();
    await server?.stop();
  });

  it('27 adds with ids on plain, fair and pooled: typed, written "unknown", no claim after', async () => {
    const warm = await p.tenant.run('acme', () => p.queue('plain').add('warm', {}));
    await waitFor(() => p.runs.some((run) => run.jobId === warm.id), 'warm-up job');
    // Scripts are writes: every claim waits in Redis until the pause ends.
    await admin.call('CLIENT', 'PAUSE', String(BOUND_MS * 6), 'WRITE');
    const kinds = ['plain', 'fair', 'pooled'] as const;
    const calls = Array.from({ length: 27 }, (_, i) => {
      const kind = kinds[i % 3];
      const who = i % 2 ? 'acme' : 'vip';
      return p.tenant
        .run(who, () => p.queue(kind).add('x', { i }, { jobId: `paused-${i}` }))
        .then(
          () => new Error(`paused-${i} reported success`),
          (error: Error) => error,
        );
    });
    const errors = await Promise.all(calls);
    for (const error of errors) {
      expect(error).toBeInstanceOf(EnqueueUnavailableError);
      // Its claim was sent and may run once Redis takes it.
      expect((error as EnqueueUnavailableError).written).toBe('unknown');
    }
    await admin.call('CLIENT', 'UNPAUSE');
    // The held claims run at once, then their releases (sent after their answers, on the same
    // connection): wait for the ledger to be empty, then make sure it stays so.
    await sleep(1000);
    await waitFor(
      async () => (await admin.keys('*~id:paused-*')).length === 0,
      'the claims of the refused adds to be released',
    );
    await sleep(1000);
    expect(await admin.keys('*~id:paused-*')).toEqual([]);
    const jobs = (await admin.keys('*:paused-*')).filter((key) => !key.includes('~id:'));
    expect(jobs).toEqual([]);
    // Every id is free: another tenant takes them all.
    for (let i = 0; i < 27; i++) {
      const kind = kinds[i % 3];
      const { id } = await p.tenant.run('globex', () =>
        p.queue(kind).add('x', { i }, { jobId: `paused-${i}` }),
      );
      expect(id).toBe(`paused-${i}`);
    }
  }, 60_000);

  it("pooled: a refused call's id does not lead another tenant's job into its pool", async () => {
    // vip's bulk is routed to vip's pool, then refused (its parent does not exist).
    await expect(
      p.tenant.run('vip', () =>
        p.queue('pooled').addBulk([
          { name: 'x', data: {}, opts: { jobId: 'routed-1' } },
          { name: 'x', data: {}, opts: { jobId: 'routed-2', parent: { id: 'no', queue: 'q' } } },
        ]),
      ),
    ).rejects.toBeInstanceOf(InvalidJobOptionsError);
    await waitFor(
      async () => (await admin.keys('*~id:routed-1')).length === 0,
      "the refused call's claim to be released",
    );
    const taken = await p.tenant.run('globex', () =>
      p.queue('pooled').add('x', {}, { jobId: 'routed-1' }),
    );
    expect({ id: taken.id, pool: taken.queueName }).toEqual({ id: 'routed-1', pool: 'pooled' });
    await waitFor(() => p.runs.some((run) => run.jobId === 'routed-1'), 'globex job to run');
    expect(p.runs.find((run) => run.jobId === 'routed-1')).toMatchObject({
      queue: 'pooled',
      tenantId: 'globex',
    });
  });
});
