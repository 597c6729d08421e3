import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import {
  DeadLetters,
  InMemoryTenantDirectory,
  InvalidTenantQueueOptionsError,
  PoolRoutingUnavailableError,
  RegisterTenantQueueOptions,
  TenantContext,
  TenantFairness,
  TenantJob,
  TenantProcessor,
  TenantQueueInspector,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantQueueTesting,
  TenantQueueTestingModule,
  TenantRecord,
  TenantRoute,
  TenantTiers,
  TenantWorkerHost,
  UnknownPoolError,
} from '../../../lib';
import { PoolRun, bootPoolApp } from '../../fixtures/pool-app';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';
import { bootTestModule } from '../../support/test-module';

const apps: TestingModule[] = [];

async function boot(input: Parameters<typeof bootPoolApp>[0]): Promise<TestingModule> {
  const app = await bootPoolApp(input);
  apps.push(app);
  return app;
}

function queueOf(app: TestingModule, name = 'imports') {
  return app.get(TenantQueueRegistry).getQueue<{ n?: number }>(name);
}

function addFor(app: TestingModule, tenantId: string, count = 1, ids?: (i: number) => string) {
  const jobs = Array.from({ length: count }, (_, i) => ({
    name: 'import',
    data: { n: i },
    opts: ids ? { jobId: ids(i) } : undefined,
  }));
  return app.get(TenantContext).run(tenantId, () => queueOf(app).addBulk(jobs));
}

/** Jobs of `tenantId` in one pool: in BullMQ (any state) plus what its fair gate still holds. */
async function heldBy(app: TestingModule, pool: string, tenantId: string): Promise<number> {
  const jobs = await queueOf(app, pool).bullQueue.getJobs();
  const bull = jobs.filter((job) => job?.data?._tenant?.tenantId === tenantId).length;
  const gate = await app.get(TenantFairness).getTenant(pool, tenantId);
  return bull + gate.backlog;
}

/** A directory that can fail on demand and counts its lookups. */
class FlakyDirectory extends InMemoryTenantDirectory {
  failing = false;
  /** Lookups never answer (a database that takes connections but not queries). */
  hanging = false;
  lookups = 0;

  override async getTenant(tenantId: string): Promise<TenantRecord | null> {
    this.lookups++;
    if (this.hanging) return new Promise<never>(() => undefined);
    // What a Postgres-backed directory throws while its database is down.
    if (this.failing) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    return super.getTenant(tenantId);
  }
}

afterAll(async () => {
  for (const app of apps) await app.close();
});

describe('dedicated pools: routing at enqueue (real Redis)', () => {
  it('routes by static map, tier and tenant record; each pool is its own queue and worker', async () => {
    const runs: PoolRun[] = [];
    const directory = new InMemoryTenantDirectory([
      { id: 'acme' },
      { id: 'small', tier: 'enterprise' },
      { id: 'ent', tier: 'enterprise' },
      { id: 'own', pools: { imports: 'imports-own' } },
      { id: 'plain', tier: 'free' },
    ]);
    const app = await boot({
      prefix: uniquePrefix('pool'),
      runs,
      directory,
      tiers: { free: {}, enterprise: { pools: { imports: 'imports-ent' } } },
      queue: {
        fairness: { defaultConcurrency: 2 },
        pools: ['imports-own'],
        routing: { acme: 'imports-acme', small: 'imports' },
      },
    });
    const registry = app.get(TenantQueueRegistry);
    expect(registry.getQueueNames().sort()).toEqual([
      'imports',
      'imports-acme',
      'imports-ent',
      'imports-own',
    ]);
    const expected: Record<string, string> = {
      acme: 'imports-acme', // static map
      small: 'imports', // static map wins over the tier
      ent: 'imports-ent', // tier
      own: 'imports-own', // the tenant's own record
      plain: 'imports', // nobody routes it: shared
    };
    for (const [tenantId, pool] of Object.entries(expected)) {
      const added = await addFor(app, tenantId, 3);
      expect(added.map((job) => job.queueName)).toEqual([pool, pool, pool]);
    }
    const forTenant = await queueOf(app).addForTenant('acme', 'import', {});
    expect(forTenant.queueName).toBe('imports-acme');
    await waitFor(() => runs.length === 16, 'all 16 jobs');
    for (const run of runs) expect(run.pool).toBe(expected[run.tenantId]);
    for (const pool of ['imports', 'imports-acme', 'imports-ent', 'imports-own']) {
      const worker = registry.getWorker(pool)!;
      expect(worker.name).toBe(pool);
      const definition = registry.getQueue(pool).definition;
      expect(worker.opts.prefix).toBe(definition.bullPrefix);
      expect(definition.bullPrefix.endsWith(`:${pool}}`)).toBe(true);
      if (pool !== 'imports') expect(definition.poolOf).toBe('imports');
    }
    // acme's jobs went through imports-acme's own gate, and none through the shared one.
    const fairness = app.get(TenantFairness);
    await waitFor(
      async () => (await fairness.getTenant('imports-acme', 'acme')).inFlight === 0,
      "acme's slots in imports-acme to be released",
    );
    expect(await heldBy(app, 'imports', 'acme')).toBe(0);
  });

  it("gives each pool its own fair gate, with the tier's limits of the queue it serves", async () => {
    const directory = new InMemoryTenantDirectory([{ id: 'g1', tier: 'gold' }]);
    const app = await boot({
      prefix: uniquePrefix('pool'),
      pools: false,
      directory,
      tiers: {
        gold: {
          maxConcurrency: 1,
          queues: { imports: { weight: 3 } },
          pools: { imports: 'imports-gold' },
        },
      },
      queue: { fairness: { maxConsecutive: 10 } },
    });
    expect((await addFor(app, 'g1', 5))[0].queueName).toBe('imports-gold');
    const gold = await app.get(TenantFairness).getTenant('imports-gold', 'g1');
    expect([gold.backlog + gold.inFlight, gold.concurrency, gold.weight]).toEqual([5, 1, 3]);
    expect((await app.get(TenantFairness).getTenant('imports', 'g1')).backlog).toBe(0);
  });

  it('routes with a function of the tenant (id, tier, record), falling through to shared', async () => {
    const runs: PoolRun[] = [];
    const seen: TenantRoute[] = [];
    const directory = new InMemoryTenantDirectory([
      { id: 'big', plan: 'big', tier: 'pro' },
      { id: 'tiny', plan: 'tiny' },
    ]);
    const app = await boot({
      prefix: uniquePrefix('pool'),
      runs,
      directory,
      queue: {
        pools: ['imports-big'],
        routing: (tenant) => {
          seen.push(tenant);
          return tenant.record?.plan === 'big' ? 'imports-big' : undefined;
        },
      },
    });
    expect((await addFor(app, 'big', 2)).map((job) => job.queueName)).toEqual([
      'imports-big',
      'imports-big',
    ]);
    expect((await addFor(app, 'tiny'))[0].queueName).toBe('imports');
    expect(seen[0]).toMatchObject({
      tenantId: 'big',
      tier: 'pro',
      record: { id: 'big', plan: 'big', status: 'active' },
    });
    // One routing call per tenant per enqueue call, not per job.
    expect(seen.map((route) => route.tenantId)).toEqual(['big', 'tiny']);
    await waitFor(() => runs.length === 3, 'three jobs');
    expect(runs.filter((run) => run.tenantId === 'big').map((run) => run.pool)).toEqual([
      'imports-big',
      'imports-big',
    ]);
    expect(runs.find((run) => run.tenantId === 'tiny')!.pool).toBe('imports');
  });

  it('refuses a pool the queue does not declare, with nothing written anywhere', async () => {
    const directory = new InMemoryTenantDirectory([
      { id: 'lost' },
      { id: 'stray', pools: { imports: 'imports-gone' } },
      { id: 'fine' },
    ]);
    const app = await boot({
      prefix: uniquePrefix('pool'),
      pools: false,
      directory,
      queue: {
        fairness: true,
        pools: ['imports-known'],
        routing: (tenant) => (tenant.tenantId === 'lost' ? 'imports-nope' : undefined),
      },
    });
    await expect(addFor(app, 'lost', 5)).rejects.toThrow(UnknownPoolError);
    const error = await addFor(app, 'lost').catch((e: UnknownPoolError) => e);
    expect(error).toMatchObject({ queue: 'imports', tenantId: 'lost', pool: 'imports-nope' });
    expect((error as Error).message).toContain('by routing function');
    expect((error as Error).message).toContain('nothing was enqueued');
    const stray = await addFor(app, 'stray', 2).catch((e: Error) => e);
    expect(stray).toBeInstanceOf(UnknownPoolError);
    expect((stray as Error).message).toContain("by tenant record's pools");
    for (const pool of ['imports', 'imports-known']) {
      expect(await heldBy(app, pool, 'lost')).toBe(0);
      expect(await heldBy(app, pool, 'stray')).toBe(0);
    }
    // The queue still works for everyone else.
    expect((await addFor(app, 'fine'))[0].queueName).toBe('imports');
    expect(await heldBy(app, 'imports', 'fine')).toBe(1);
  });

  it('reads no directory for a queue without pools, and routes from cache otherwise', async () => {
    const directory = new FlakyDirectory([{ id: 'acme' }, { id: 'beta' }]);
    const app = await boot({
      prefix: uniquePrefix('pool'),
      pools: false,
      directory,
      queue: { pools: ['imports-acme'], routing: { acme: 'imports-acme' } },
      extraQueues: [{ name: 'plain' }],
    });
    const plain = app.get(TenantQueueRegistry).getQueue('plain');
    await app.get(TenantContext).run('beta', () => plain.add('x', {}));
    expect(directory.lookups).toBe(0);
    await addFor(app, 'acme', 3); // a static map entry needs no lookup either
    expect(directory.lookups).toBe(0);
    await addFor(app, 'beta', 3);
    await addFor(app, 'beta', 3);
    expect(directory.lookups).toBe(1); // cached for tierCacheMs
  });

  it('on a directory outage, routes a tenant it has routed before to that pool and refuses an unknown one', async () => {
    const directory = new FlakyDirectory([
      { id: 'seen', tier: 'dedicated' },
      { id: 'unseen', tier: 'dedicated' },
    ]);
    const app = await boot({
      prefix: uniquePrefix('pool'),
      pools: false,
      directory,
      tierCacheMs: 0,
      tiers: { dedicated: { pools: { imports: 'imports-dedicated' } } },
      queue: { fairness: true },
    });
    expect((await addFor(app, 'seen'))[0].queueName).toBe('imports-dedicated');
    directory.failing = true;
    const [fallback] = await addFor(app, 'seen');
    expect(fallback.queueName).toBe('imports-dedicated');
    expect(await heldBy(app, 'imports-dedicated', 'seen')).toBe(2);
    const refused = await addFor(app, 'unseen').catch((e: Error) => e);
    expect(refused).toBeInstanceOf(PoolRoutingUnavailableError);
    expect((refused as Error).message).toContain('nothing was enqueued');
    expect(await heldBy(app, 'imports', 'unseen')).toBe(0);
    expect(await heldBy(app, 'imports-dedicated', 'unseen')).toBe(0);
    directory.failing = false;
    expect((await addFor(app, 'unseen'))[0].queueName).toBe('imports-dedicated');
  });

  it('bounds a directory that never answers by guards.portTimeoutMs: routing refused as a directory outage, not as Redis', async () => {
    const directory = new FlakyDirectory([{ id: 'seen', tier: 'dedicated' }, { id: 'unseen' }]);
    const app = await boot({
      prefix: uniquePrefix('pool'),
      pools: false,
      directory,
      tierCacheMs: 0,
      guards: { portTimeoutMs: 300 },
      tiers: { dedicated: { pools: { imports: 'imports-dedicated' } } },
      queue: { fairness: true },
    });
    expect((await addFor(app, 'seen'))[0].queueName).toBe('imports-dedicated');
    directory.hanging = true;
    let started = Date.now();
    const [fallback] = await addFor(app, 'seen');
    expect(fallback.queueName).toBe('imports-dedicated');
    expect(Date.now() - started).toBeLessThan(2_000); // enqueueTimeoutMs is 5 s
    started = Date.now();
    const refused = await addFor(app, 'unseen').catch((e: Error) => e);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(refused).toBeInstanceOf(PoolRoutingUnavailableError);
    expect((refused as Error).message).toMatch(
      /did not answer within 300 ms.*nothing was enqueued/s,
    );
    expect(await heldBy(app, 'imports', 'unseen')).toBe(0);
  });
});

describe('dedicated pools: moving a tenant (real Redis)', () => {
  it('applies a tier change at TenantTiers.refresh, or after tierCacheMs, without a restart', async () => {
    const directory = new InMemoryTenantDirectory([
      { id: 'up', tier: 'free' },
      { id: 'later', tier: 'free' },
    ]);
    const app = await boot({
      prefix: uniquePrefix('pool'),
      pools: false,
      directory,
      tierCacheMs: 400,
      tiers: { free: {}, enterprise: { pools: { imports: 'imports-ent' } } },
      queue: {},
    });
    expect((await addFor(app, 'up'))[0].queueName).toBe('imports');
    expect((await addFor(app, 'later'))[0].queueName).toBe('imports');
    directory.upsert({ id: 'up', tier: 'enterprise' });
    directory.upsert({ id: 'later', tier: 'enterprise' });
    expect((await addFor(app, 'up'))[0].queueName).toBe('imports'); // cached profile
    await app.get(TenantTiers).refresh('up');
    expect((await addFor(app, 'up'))[0].queueName).toBe('imports-ent');
    await waitFor(
      async () => (await addFor(app, 'later'))[0].queueName === 'imports-ent',
      'the cached profile of "later" to expire',
      5_000,
    );
    // And back: a downgrade returns the tenant to the shared pool the same way.
    directory.upsert({ id: 'up', tier: 'free' });
    await app.get(TenantTiers).refresh('up');
    expect((await addFor(app, 'up'))[0].queueName).toBe('imports');
  });

  it('keeps queued jobs in the old pool, sends new ones to the new pool, runs each exactly once', async () => {
    const runs: PoolRun[] = [];
    const directory = new InMemoryTenantDirectory([
      { id: 'mover', tier: 'standard' },
      { id: 'other', tier: 'standard' },
    ]);
    const app = await boot({
      prefix: uniquePrefix('pool'),
      runs,
      directory,
      jobMs: 5,
      tierCacheMs: 60_000,
      tiers: { standard: {}, dedicated: { pools: { imports: 'imports-mover' } } },
      queue: { fairness: { defaultConcurrency: 2 } },
    });
    const tiers = app.get(TenantTiers);
    const inspector = app.get(TenantQueueInspector);
    // Hold mover's jobs on the shared pool (its gate admits none), as if its workers were gone;
    // pausing the BullMQ worker instead races with a fetch already under way.
    const fairness = app.get(TenantFairness);
    await fairness.pause('imports', 'mover');

    const N = 40;
    const M = 30;
    const first = await addFor(app, 'mover', N, (i) => `mv-${i}`);
    expect(new Set(first.map((job) => job.queueName))).toEqual(new Set(['imports']));

    // The tier changes in the directory: cached profiles keep routing to shared until refresh.
    directory.upsert({ id: 'mover', tier: 'dedicated' });
    expect((await addFor(app, 'mover'))[0].queueName).toBe('imports');
    await tiers.refresh('mover');
    const moved = await addFor(app, 'mover', M);
    expect(new Set(moved.map((job) => job.queueName))).toEqual(new Set(['imports-mover']));
    expect((await addFor(app, 'other'))[0].queueName).toBe('imports');

    // A repeat of ids first routed to shared (a retried fan-out, a recovered schedule) sticks
    // to shared, where the first copies still are, so it does not run twice.
    const repeat = await addFor(app, 'mover', N, (i) => `mv-${i}`);
    expect(new Set(repeat.map((job) => job.queueName))).toEqual(new Set(['imports']));

    // The dedicated pool drains while the shared pool holds mover's old backlog.
    await waitFor(
      () => runs.filter((run) => run.pool === 'imports-mover').length === M,
      'the moved jobs',
    );
    // The drain rule's signal: mover's backlog on the old pool, per queue in the inspector.
    await waitFor(
      async () => (await inspector.getTenant('imports', 'mover')).backlog === N + 1,
      "the inspector to show mover's old backlog",
    );
    expect(runs.filter((run) => run.pool === 'imports' && run.tenantId === 'mover')).toEqual([]);

    await fairness.resume('imports', 'mover');
    await waitFor(() => runs.length === N + 1 + M + 1, 'every job', 30_000);
    await waitFor(
      async () => (await inspector.getTenant('imports', 'mover')).backlog === 0,
      'the shared backlog of mover to drain',
    );
    const counts = new Map<string, number>();
    for (const run of runs) counts.set(run.jobId, (counts.get(run.jobId) ?? 0) + 1);
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    expect(counts.size).toBe(N + 1 + M + 1);
    for (let i = 0; i < N; i++) {
      expect(runs.find((run) => run.jobId === `mv-${i}`)!.pool).toBe('imports');
    }
    for (const job of moved) {
      expect(runs.find((run) => run.jobId === job.id)!.pool).toBe('imports-mover');
    }
  });
});

describe('dedicated pools: declarations and consumers', () => {
  async function compile(queues: RegisterTenantQueueOptions[], providers: any[] = []) {
    @Module({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueTestingModule.forRoot({
          tiers: { gold: { pools: { imports: 'imports-gold' } } },
        }),
        TenantQueueModule.registerQueue(...queues),
      ],
      providers,
    })
    class AppModule {}
    const moduleRef = await bootTestModule({ imports: [AppModule] });
    return moduleRef;
  }

  const refused = async (queues: RegisterTenantQueueOptions[], text: string, providers?: any[]) => {
    const error = await compile(queues, providers).then(
      async (app) => {
        await app.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidTenantQueueOptionsError);
    expect((error as Error).message).toContain(text);
  };

  it('validates pools and routing at registration', async () => {
    await refused([{ name: 'imports', pools: ['bad:name'] }], 'imports.pools');
    await refused([{ name: 'imports', pools: ['imports'] }], 'the shared pool is the queue');
    await refused([{ name: 'imports', routing: { acme: 'a b' } }], 'imports.routing.acme');
    await refused([{ name: 'imports', routing: 'acme' as never }], 'imports.routing');
    await refused([{ name: 'imports', pools: ['exports'] }, { name: 'exports' }], '"exports"');
    await refused(
      [{ name: 'exports' }, { name: 'imports', pools: ['exports'] }],
      'a registered queue',
    );
    await refused(
      [
        { name: 'imports', pools: ['heavy'] },
        { name: 'exports', pools: ['heavy'] },
      ],
      'a pool of "imports"',
    );
    // A tier pool is an implicit declaration, checked like the others.
    await refused([{ name: 'imports' }, { name: 'imports-gold' }], 'a pool of "imports"');
  });

  it("validates a processor's pools at bootstrap", async () => {
    @TenantProcessor('imports', { pools: ['imports-nope'] })
    class WrongPools extends TenantWorkerHost {
      async process() {}
    }
    await refused([{ name: 'imports', pools: ['imports-acme'] }], 'imports-nope', [WrongPools]);
  });

  it('routes in TenantQueueTestingModule too, and runs each pool inline', async () => {
    const ran: string[] = [];
    @TenantProcessor('imports')
    class InlineImports extends TenantWorkerHost {
      async process(job: TenantJob) {
        ran.push(`${job.tenant!.tenantId}@${job.queueName}`);
      }
    }
    const app = await compile(
      [{ name: 'imports', routing: { acme: 'imports-acme' } }],
      [InlineImports],
    );
    const queue = app.get(TenantQueueRegistry).getQueue('imports');
    const context = app.get(TenantContext);
    await context.run('acme', () => queue.add('a', {}));
    await context.run('beta', () => queue.add('b', {}));
    const testing = app.get(TenantQueueTesting);
    await testing.drain();
    expect(ran.sort()).toEqual(['acme@imports-acme', 'beta@imports']);
    expect(testing.jobs('imports-acme')).toHaveLength(1);
    await app.close();
  });
});

describe('dedicated pools: dead letters', () => {
  afterAll(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it("replays a dead letter to the tenant's current pool after a move", async () => {
    const runs: PoolRun[] = [];
    const directory = new InMemoryTenantDirectory([{ id: 'mover' }]);
    let failing = true;
    const app = await boot({
      prefix: uniquePrefix(),
      queue: { pools: ['imports-ded'] },
      runs,
      directory,
      fail: () => failing,
    });
    const [job] = await addFor(app, 'mover');
    expect(job.queueName).toBe('imports');
    const letters = app.get(DeadLetters);
    await waitFor(async () => (await letters.list('mover')).items.length === 1, 'the dead letter');
    directory.upsert({ id: 'mover', pools: { imports: 'imports-ded' } });
    await app.get(TenantTiers).refresh('mover');
    failing = false;
    const replayed = await letters.replay('mover', job.id);
    expect(replayed.queueName).toBe('imports-ded');
    await waitFor(() => runs.some((r) => r.pool === 'imports-ded'), 'the replay on the new pool');
  });
});
