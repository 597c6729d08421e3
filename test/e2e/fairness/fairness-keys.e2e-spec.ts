import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Job } from 'bullmq';
import {
  TenantBacklogFullError,
  TenantContext,
  TenantFairness,
  TenantFairnessOptions,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { TenantQueueRedis } from '../../../lib/core/redis/tenant-queue.redis';
import { tenantKeyPart } from '../../../lib/core/context/tenant-key';
import { gateKeys } from '../../../lib/fairness/fair-gate.script';
import { testRootImports } from '../../support/test-module';
import { enqueue, many } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

/** Any id up to 64 characters on one line: ':', '{', '}', spaces, unicode. */
const ANY_ID = /^[^\n]{1,64}$/u;
const PROTO_IDS = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];
const ODD_IDS = ['q', 'q:entries', 'a b{c}', 'é-ü-漢', 'x'.repeat(64)];

interface Done {
  tenantId: string;
  jobId: string;
  lane: string;
}

async function boot(prefix: string, fairness: TenantFairnessOptions, done: Done[], workers = 2) {
  @TenantProcessor('keys', { concurrency: Math.max(1, workers) })
  class KeysProcessor extends TenantWorkerHost {
    async process(job: TenantJob<{ lane?: string }>) {
      done.push({ tenantId: job.tenant!.tenantId, jobId: job.id!, lane: job.data.lane ?? '' });
    }
  }
  @Module({
    imports: [
      ...testRootImports(prefix, { tenantIdPattern: ANY_ID }),
      TenantQueueModule.registerQueue({ name: 'keys', fairness }),
    ],
    providers: workers > 0 ? [KeysProcessor] : [],
  })
  class KeysModule {}
  const moduleRef = await Test.createTestingModule({ imports: [KeysModule] }).compile();
  await moduleRef.init();
  return moduleRef;
}

/** `count` jobs of `tenantId` on queue `keys`, in `lane` when given. */
const enqueueKeys = (moduleRef: TestingModule, tenantId: string, count: number, lane?: string) =>
  enqueue(moduleRef, 'keys', tenantId, many(count, { lane }), lane ? { lane } : {});

describe('fair gate: any tenant id, refused jobs, all-or-nothing enqueue (real Redis)', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('serves and reports tenants named like Object.prototype members', async () => {
    const done: Done[] = [];
    moduleRef = await boot(uniquePrefix(), {}, done);
    const fairness = moduleRef.get(TenantFairness);
    for (const tenant of PROTO_IDS) {
      expect((await fairness.getTenant('keys', tenant)).backlog).toBe(0);
      await enqueueKeys(moduleRef, tenant, 3);
    }
    await waitFor(() => done.length === 3 * PROTO_IDS.length, 'every job done');
    for (const tenant of PROTO_IDS) {
      expect(done.filter((d) => d.tenantId === tenant)).toHaveLength(3);
      await waitFor(
        async () => (await fairness.getTenant('keys', tenant)).inFlight === 0,
        `${tenant}'s slots`,
      );
      await fairness.setWeight('keys', tenant, 2);
      expect((await fairness.getTenant('keys', tenant)).weight).toBe(2);
    }
  });

  it("keeps each tenant's gate keys apart for ids with ':', braces, spaces and unicode", async () => {
    const prefix = uniquePrefix();
    const done: Done[] = [];
    const fairness: TenantFairnessOptions = {
      lanes: { interactive: { share: 0.5 }, bulk: { share: 0.5 } },
    };
    moduleRef = await boot(prefix, fairness, done, 0);
    const gate = moduleRef.get(TenantFairness);
    // Different backlogs per tenant and lane, held back by a pause, then counted one by one.
    for (const [i, tenant] of ODD_IDS.entries()) {
      await gate.pause('keys', tenant);
      await enqueueKeys(moduleRef, tenant, i + 1, 'bulk');
      await enqueueKeys(moduleRef, tenant, 2 * i + 1, 'interactive');
    }
    for (const [i, tenant] of ODD_IDS.entries()) {
      expect((await gate.getTenant('keys', tenant)).backlog).toBe(3 * i + 2);
    }
    const redis = moduleRef.get(TenantQueueRedis).client;
    const { bullPrefix } = moduleRef.get(TenantQueueRegistry).getQueue('keys').definition;
    expect(await redis.llen(`${bullPrefix}:~fair:q:${tenantKeyPart('q:entries')}:bulk`)).toBe(2);
    expect(await redis.llen(`${bullPrefix}:~fair:q:q:bulk`)).toBe(1);
    await moduleRef.close();

    // A worker now: every tenant resumed, every job done under its own tenant, nothing left.
    moduleRef = await boot(prefix, fairness, done, 2);
    const fair = moduleRef.get(TenantFairness);
    for (const tenant of ODD_IDS) await fair.resume('keys', tenant);
    const total = ODD_IDS.reduce((sum, _t, i) => sum + 3 * i + 2, 0);
    await waitFor(() => done.length === total, 'every job done');
    for (const [i, tenant] of ODD_IDS.entries()) {
      const mine = done.filter((d) => d.tenantId === tenant);
      expect(mine.filter((d) => d.lane === 'bulk')).toHaveLength(i + 1);
      expect(mine.filter((d) => d.lane === 'interactive')).toHaveLength(2 * i + 1);
      await waitFor(async () => {
        const state = await fair.getTenant('keys', tenant);
        return state.backlog === 0 && state.inFlight === 0;
      }, `${tenant} to hold nothing`);
    }
  });

  it("drops a drained rate-limited tenant's schedule once it is past: no field left per tenant", async () => {
    const done: Done[] = [];
    moduleRef = await boot(uniquePrefix(), { rateLimit: { max: 1, per: 200 }, tickMs: 100 }, done);
    const tenants = Array.from({ length: 20 }, (_, i) => `rated-${i}`);
    for (const tenant of tenants) await enqueueKeys(moduleRef, tenant, 3);
    await waitFor(() => done.length === 3 * tenants.length, 'every job done');
    const redis = moduleRef.get(TenantQueueRedis).client;
    const { bullPrefix } = moduleRef.get(TenantQueueRegistry).getQueue('keys').definition;
    // Each tenant's schedule still holds for an interval after its last job; then it goes.
    await waitFor(
      async () => (await redis.hlen(`${bullPrefix}:~fair:tat`)) === 0,
      'the schedules gone',
      5_000,
    );
    // A tenant that comes back is rate limited afresh: its 3 jobs 200 ms apart.
    done.length = 0;
    const at: number[] = [];
    await enqueueKeys(moduleRef, tenants[0], 3);
    await waitFor(() => {
      if (done.length > at.length) at.push(Date.now());
      return done.length === 3;
    }, `${tenants[0]}'s jobs again`);
    expect(at[2] - at[0]).toBeGreaterThanOrEqual(300);
  });

  it("drops a drained tenant's schedule shared by a budget's queues once it is past", async () => {
    const prefix = uniquePrefix();
    const done: string[] = [];
    const processors = ['b1', 'b2'].map((name) => {
      @TenantProcessor(name, { concurrency: 2 })
      class BudgetProcessor extends TenantWorkerHost {
        async process(job: TenantJob) {
          done.push(job.tenant!.tenantId);
        }
      }
      return BudgetProcessor;
    });
    const fairness = { rateLimit: { max: 1, per: 200 }, tickMs: 100 };
    @Module({
      imports: [
        ...testRootImports(prefix),
        TenantQueueModule.registerQueue(
          { name: 'b1', budget: 'api', fairness },
          { name: 'b2', budget: 'api', fairness },
        ),
      ],
      providers: processors,
    })
    class BudgetModule {}
    moduleRef = await Test.createTestingModule({ imports: [BudgetModule] }).compile();
    await moduleRef.init();
    const tenants = Array.from({ length: 20 }, (_, i) => `budgeted-${i}`);
    for (const tenant of tenants) {
      await enqueue(moduleRef, 'b1', tenant, many(2));
      await enqueue(moduleRef, 'b2', tenant, many(1));
    }
    await waitFor(() => done.length === 3 * tenants.length, 'every job done');
    const redis = moduleRef.get(TenantQueueRedis).client;
    await waitFor(
      async () => (await redis.hlen(`{${prefix}:~budget:api}:~budget:tat`)) === 0,
      'the shared schedules gone',
      5_000,
    );
  });

  it("drops a past tenant's turn level while the queue never runs dry: no field left per tenant", async () => {
    const done: Done[] = [];
    moduleRef = await boot(uniquePrefix(), { tickMs: 100 }, done);
    const redis = moduleRef.get(TenantQueueRedis).client;
    const { bullPrefix, name } = moduleRef.get(TenantQueueRegistry).getQueue('keys').definition;
    // A tenant whose backlog keeps BullMQ's prioritized set from running dry...
    for (let i = 0; i < 20; i++) await enqueueKeys(moduleRef, 'whale', 1000);
    // ... while tenants come, run a job by turn, and go.
    const tenants = Array.from({ length: 30 }, (_, i) => `passing-${i}`);
    for (const tenant of tenants) await enqueueKeys(moduleRef, tenant, 1);
    await waitFor(
      () => tenants.every((t) => done.some((d) => d.tenantId === t)),
      'every passing tenant served',
    );
    // Their last levels fall behind the level BullMQ serves: they read as absent, and go.
    await waitFor(
      async () => (await redis.hkeys(`${bullPrefix}:~fair:lv`)).join() === 'whale',
      'only the whale keeps a level',
      5_000,
    );
    expect(await redis.zcard(`${bullPrefix}:${name}:prioritized`)).toBeGreaterThan(0);
    // A passing tenant that comes back takes the level served now: its job runs before the
    // whale's next thousands.
    const before = done.length;
    await enqueueKeys(moduleRef, tenants[0], 1);
    await waitFor(
      () => done.slice(before).some((d) => d.tenantId === tenants[0]),
      `${tenants[0]} again`,
    );
    expect(done.length - before).toBeLessThan(500);
  });

  it('takes into the gate only ids BullMQ holds: forged script calls add nothing; the rest flows', async () => {
    const prefix = uniquePrefix();
    const done: Done[] = [];
    moduleRef = await boot(prefix, { tickMs: 200 }, done, 2);
    const redis = moduleRef.get(TenantQueueRedis).client as any;
    await waitFor(() => typeof redis.tqFairEnqueue === 'function', 'scripts loaded');
    const registry = moduleRef.get(TenantQueueRegistry);
    const { bullPrefix } = registry.getQueue('keys').definition;
    const config = JSON.stringify({
      jp: `${bullPrefix}:keys:`,
      chk: 1000,
      sys: '~system',
      dw: 1,
      dcap: 0,
      k: 5,
      win: 0,
      minWin: 16,
      lease: 30000,
    });
    // Straight into the gate's script, as a caller skipping BullMQ's add would: the ids name no
    // job BullMQ holds (an integer id, which BullMQ refuses, and a plain one).
    const [status, admitted] = await redis.tqFairEnqueue(
      gateKeys(`${bullPrefix}:~fair`),
      config,
      10,
      0,
      '[]',
      Date.now(),
      '',
      ...['1001', 'evil', '', 'work'],
      ...['forged', 'evil', '', 'work'],
    );
    expect([status, admitted]).toEqual(['ok', []]);
    for (const tenant of ['good', 'other']) await enqueueKeys(moduleRef, tenant, 20);
    await waitFor(() => done.length === 40, 'the good jobs');
    const evil = await moduleRef.get(TenantFairness).getTenant('keys', 'evil');
    expect([evil.backlog, evil.inFlight]).toEqual([0, 0]);
    expect(await redis.hlen(`${bullPrefix}:~fair:jobs`)).toBe(0);
    expect(done.some((d) => d.tenantId === 'evil')).toBe(false);
    const queue = registry.getQueue('keys').bullQueue;
    expect(await Job.fromId(queue, 'forged')).toBeUndefined();
  });

  it('writes nothing of an enqueue call refused for a full backlog, however large', async () => {
    const done: Done[] = [];
    moduleRef = await boot(uniquePrefix(), { maxBacklog: 2500 }, done, 0);
    const queue = moduleRef.get(TenantQueueRegistry).getQueue('keys');
    const context = moduleRef.get(TenantContext);
    const fairness = moduleRef.get(TenantFairness);
    const jobs = (count: number) =>
      Array.from({ length: count }, () => ({ name: 'work', data: {} }));
    // 4,600 jobs in one call: the first 2,000 would fit, the whole does not; none is written.
    await expect(context.run('A', () => queue.addBulk(jobs(4600)))).rejects.toBeInstanceOf(
      TenantBacklogFullError,
    );
    expect((await fairness.getTenant('keys', 'A')).backlog).toBe(0);
    await context.run('A', () => queue.addBulk(jobs(2500)));
    const state = await fairness.getTenant('keys', 'A');
    expect(state.backlog + state.inFlight).toBe(2500);
  });
  it('dispatches a backlog whose kept count is missing (a gate written before the counts)', async () => {
    const prefix = uniquePrefix();
    const done: Done[] = [];
    // The gate's own backlog (priorityByTurn: false: the default would queue these by turn).
    moduleRef = await boot(prefix, { window: 2, priorityByTurn: false }, done, 0);
    await enqueueKeys(moduleRef, 'counted', 6);
    const redis = moduleRef.get(TenantQueueRedis).client;
    const { bullPrefix } = moduleRef.get(TenantQueueRegistry).getQueue('keys').definition;
    expect(await redis.llen(`${bullPrefix}:~fair:q:counted`)).toBe(4);
    expect(await redis.hget(`${bullPrefix}:~fair:bl`, 'counted')).toBe('4');
    await redis.del(`${bullPrefix}:~fair:bl`);
    await moduleRef.close();
    moduleRef = await boot(prefix, { window: 2 }, done);
    await waitFor(() => done.length === 6, 'all six jobs, the four without a kept count included');
    expect(new Set(done.map((d) => d.jobId)).size).toBe(6);
    const again = moduleRef.get(TenantQueueRedis).client;
    await waitFor(
      async () => (await again.exists(`${bullPrefix}:~fair:q:counted`)) === 0,
      'the backlog to drain',
    );
  });
});
