import { Logger, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  InMemoryTenantDirectory,
  InvalidTenantQueueOptionsError,
  TenantDirectory,
  TenantFairness,
  TenantFairnessOptions,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantTierOptions,
  TenantWorkerHost,
} from '../../../lib';
import { TenantQueueRedis } from '../../../lib/core/redis/tenant-queue.redis';
import { enqueue } from '../../support/jobs';
import { testRootImports, tieredRootOptions } from '../../support/test-module';
import { uniquePrefix } from '../../support/redis-url';
import { sleep, waitFor } from '../../support/wait';

interface FloorJob {
  ms: number;
}

/** Handlers entered and not returned, and starts, per tenant. */
class Running {
  readonly now = new Map<string, number>();
  readonly started = new Map<string, number>();
  readonly max = new Map<string, number>();
  of = (tenant: string) => this.now.get(tenant) ?? 0;
  startsOf = (tenant: string) => this.started.get(tenant) ?? 0;
  enter(tenant: string): void {
    const n = this.of(tenant) + 1;
    this.now.set(tenant, n);
    this.started.set(tenant, this.startsOf(tenant) + 1);
    this.max.set(tenant, Math.max(n, this.max.get(tenant) ?? 0));
  }
  leave(tenant: string): void {
    this.now.set(tenant, this.of(tenant) - 1);
  }
}

async function boot(input: {
  fairness: TenantFairnessOptions;
  concurrency: number;
  running: Running;
  directory?: TenantDirectory;
  tiers?: Record<string, TenantTierOptions>;
}): Promise<TestingModule> {
  const { running } = input;

  @TenantProcessor('floor', { concurrency: input.concurrency })
  class FloorProcessor extends TenantWorkerHost {
    async process(job: TenantJob<FloorJob>) {
      const tenant = job.tenant!.tenantId;
      running.enter(tenant);
      try {
        await sleep(job.data.ms);
      } finally {
        running.leave(tenant);
      }
    }
  }

  @Module({
    imports: [
      ...testRootImports(uniquePrefix(), tieredRootOptions(input)),
      TenantQueueModule.registerQueue({
        name: 'floor',
        fairness: input.fairness,
        defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
      }),
    ],
    providers: [FloorProcessor],
  })
  class FloorAppModule {}

  const moduleRef = await Test.createTestingModule({ imports: [FloorAppModule] }).compile();
  await moduleRef.init();
  return moduleRef;
}

/** `count` jobs of `min` to `min + spread - 1` ms (a fixed pattern, so runs are comparable). */
const addFloorJobs = (
  moduleRef: TestingModule,
  tenant: string,
  count: number,
  [min, spread] = [20, 31],
) =>
  enqueue(
    moduleRef,
    'floor',
    tenant,
    Array.from({ length: count }, (_, i): FloorJob => ({ ms: min + ((i * 7919) % spread) })),
  );

/**
 * Three tenants of weight 10 flood (2,000 jobs of 20-50 ms each, enqueued first, 8 worker
 * slots), then F enqueues `jobs` of 150-250 ms: F's running count every 15 ms from its second
 * start until its last start. F's jobs are long against the few ms (tens on a loaded machine)
 * that BullMQ leaves a slot empty between two jobs (moveToFinished, the next fetch), which no
 * gate can remove, so a sample below the floor says something about the gate.
 */
async function floodSamples(
  directory: InMemoryTenantDirectory,
  jobs: number,
  fairness: TenantFairnessOptions = {},
) {
  const running = new Running();
  const moduleRef = await boot({ fairness, concurrency: 8, running, directory });
  try {
    for (const tenant of ['A', 'B', 'C']) await addFloorJobs(moduleRef, tenant, 2000);
    await waitFor(() => running.startsOf('A') >= 20, 'the flood running');
    await addFloorJobs(moduleRef, 'F', jobs, [150, 101]);
    const samples: number[] = [];
    const timer = setInterval(() => {
      const starts = running.startsOf('F');
      if (starts >= 2 && starts < jobs) samples.push(running.of('F'));
    }, 15);
    try {
      await waitFor(() => running.startsOf('F') >= jobs, "F's jobs started", 30_000);
    } finally {
      clearInterval(timer);
    }
    const flood = ['A', 'B', 'C'].reduce((sum, t) => sum + running.startsOf(t), 0);
    return { samples, maxF: running.max.get('F') ?? 0, flood };
  } finally {
    await moduleRef.close();
  }
}

/** The share of `samples` that meet `test`. */
const shareOf = (samples: number[], test: (n: number) => boolean) =>
  samples.filter(test).length / samples.length;

const flooders = [
  { id: 'A', status: 'active' as const, weight: 10 },
  { id: 'B', status: 'active' as const, weight: 10 },
  { id: 'C', status: 'active' as const, weight: 10 },
];

describe('fair gate: a guaranteed floor with burst (real Redis)', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
    jest.restoreAllMocks();
  });

  // Plain: F's jobs go in with lifo; with lanes (BullMQ priorities 1/2) with priority 0.
  it.each([
    ['a plain fair queue', {}],
    ['a queue with lanes', { lanes: { interactive: { share: 0.5 }, bulk: { share: 0.5 } } }],
  ])(
    'keeps a tenant with minConcurrency 2 at >= 2 running under a 3-tenant flood (%s)',
    async (_, fairness) => {
      const directory = new InMemoryTenantDirectory([
        ...flooders,
        { id: 'F', status: 'active', minConcurrency: 2, maxConcurrency: 6 },
      ]);
      const { samples, maxF, flood } = await floodSamples(directory, 50, fairness);
      expect(samples.length).toBeGreaterThan(10);
      // What the README promises: F runs >= 2 jobs at most samples (73-98% measured under load;
      // below 100% by BullMQ's own turnaround between two jobs of a slot), against 25-29%
      // without the floor in admission order (the next test). A loaded machine widens that turnaround, never the
      // gap between the two.
      const atFloor = shareOf(samples, (n) => n >= 2);
      console.log(
        `floor tenant at >= 2 running: ${(100 * atFloor).toFixed(1)}% of ${samples.length} samples`,
      );
      expect(atFloor).toBeGreaterThanOrEqual(0.6);
      expect(shareOf(samples, (n) => n >= 1)).toBeGreaterThanOrEqual(0.9);
      // Its cap still holds, and the flood kept running meanwhile (work-conserving).
      expect(maxF).toBeLessThanOrEqual(6);
      expect(flood).toBeGreaterThan(100);
    },
  );

  it('without minConcurrency, in admission order, the same tenant drops below 2 running (the floor is what holds it)', async () => {
    const directory = new InMemoryTenantDirectory([
      ...flooders,
      { id: 'F', status: 'active', maxConcurrency: 6 },
    ]);
    // Admission order (priorityByTurn: false). By turn (the default) F's long jobs get their
    // 1 in 16 of the starts at once, which at 150-250 ms against the flood's 20-50 ms keeps about
    // three running (91% of samples at >= 2, measured): there the turns alone hold it.
    const { samples } = await floodSamples(directory, 20, { priorityByTurn: false });
    expect(samples.length).toBeGreaterThan(10);
    const atFloor = shareOf(samples, (n) => n >= 2);
    console.log(
      `no floor, at >= 2 running: ${(100 * atFloor).toFixed(1)}% of ${samples.length} samples`,
    );
    // 25-29% alone (since the light-tenant rules of issue 25 put a tenant's admitted job at the
    // head of the wait list when it has nothing else in flight; 2.5-3% before), above 30% in a
    // loaded full run: the floor's own test asks for 60% or more.
    expect(atFloor).toBeLessThan(0.45);
  });

  it('bursts to its cap when the other tenants are idle (a run-time floor)', async () => {
    const running = new Running();
    moduleRef = await boot({ fairness: { defaultConcurrency: 6 }, concurrency: 8, running });
    await moduleRef.get(TenantFairness).setMinConcurrency('floor', 'F', 2);
    expect(await moduleRef.get(TenantFairness).getTenant('floor', 'F')).toMatchObject({
      minConcurrency: 2,
      minConcurrencyOverride: 2,
      concurrency: 6,
    });
    await addFloorJobs(moduleRef, 'F', 120);
    await waitFor(() => running.startsOf('F') === 120, "F's jobs started");
    expect(running.max.get('F')).toBe(6);
  });

  it('gives every tenant the queue default floor and leaves no floor bookkeeping behind', async () => {
    const running = new Running();
    moduleRef = await boot({
      fairness: { defaultMinConcurrency: 1, defaultConcurrency: 3 },
      concurrency: 4,
      running,
    });
    for (const tenant of ['A', 'B', 'C', 'F']) await addFloorJobs(moduleRef, tenant, 60, [5, 10]);
    const all = () => ['A', 'B', 'C', 'F'].reduce((sum, t) => sum + running.startsOf(t), 0);
    await waitFor(() => all() === 240, 'every job started');
    expect(await moduleRef.get(TenantFairness).getTenant('floor', 'F')).toMatchObject({
      minConcurrency: 1,
      minConcurrencyOverride: null,
    });
    for (const tenant of ['A', 'B', 'C', 'F'])
      expect(running.max.get(tenant)).toBeLessThanOrEqual(3);
    const base = `${moduleRef.get(TenantQueueRegistry).getQueue('floor').definition.bullPrefix}:~fair`;
    const redis = moduleRef.get(TenantQueueRedis).client;
    await waitFor(async () => (await redis.hlen(`${base}:inf`)) === 0, 'every slot released');
    expect(await redis.scard(`${base}:below`)).toBe(0);
    expect(Number((await redis.hget(`${base}:state`, 'below')) ?? 0)).toBe(0);
  });

  // Issue 22, item 6: 2,000 tenants with the queue's default floor of 1 had BullMQ hold 3,457
  // admitted jobs against a window of 64, and no warning fired.
  it("holds BullMQ's admitted jobs to the window plus the workers' slots when a default floor meets 300 tenants, and warns", async () => {
    const warnings: string[] = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
      warnings.push(String(message));
    });
    const running = new Running();
    const window = 8;
    moduleRef = await boot({
      fairness: { defaultMinConcurrency: 1, window, minWindow: 4, tickMs: 100 },
      concurrency: 4,
      running,
    });
    const queue = moduleRef.get(TenantQueueRegistry).getQueue('floor');
    const leasesKey = `${queue.definition.bullPrefix}:~fair:leases`;
    const redis = moduleRef.get(TenantQueueRedis).client;
    let admitted = 0;
    let leases = 0;
    const sample = async () => {
      const c = await queue.bullQueue.getJobCounts('wait', 'prioritized', 'active');
      admitted = Math.max(admitted, c.wait + c.prioritized + c.active);
      leases = Math.max(leases, await redis.zcard(leasesKey));
    };
    const tenants = Array.from({ length: 300 }, (_, i) => `t${i}`);
    for (const [i, tenant] of tenants.entries()) {
      await addFloorJobs(moduleRef, tenant, 2, [5, 10]);
      if (i % 10 === 0) await sample();
    }
    const all = () => tenants.reduce((sum, t) => sum + running.startsOf(t), 0);
    while (all() < 600) {
      await sample();
      await sleep(10);
    }
    // The gate: the window, plus the floors beyond it up to twice the workers' 4 slots. BullMQ:
    // that, plus the jobs still active after their slot was freed (released before
    // moveToFinished).
    expect(leases).toBeLessThanOrEqual(window + 2 * 4);
    expect(admitted).toBeLessThanOrEqual(window + 2 * 4 + 4);
    expect(warnings.find((w) => w.includes('below their floor'))).toMatch(
      /queue "floor" .* defaultMinConcurrency of 1 applies to every tenant/,
    );
  }, 90_000);

  it('warns when the known floors exceed the workers, and refuses a floor above the cap', async () => {
    const warnings: string[] = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
      warnings.push(String(message));
    });
    moduleRef = await boot({
      fairness: { defaultConcurrency: 4 },
      concurrency: 2,
      running: new Running(),
      tiers: { gold: { minConcurrency: 3 } },
    });
    await waitFor(() => warnings.some((w) => w.includes('tier "gold"')), 'the bootstrap warning');
    expect(warnings.find((w) => w.includes('tier "gold"'))).toMatch(
      /queue "floor" add up to 3 slots .* live workers have 2/,
    );
    const fairness = moduleRef.get(TenantFairness);
    await fairness.setMinConcurrency('floor', 'X', 2);
    expect(warnings.filter((w) => w.includes('tenants recorded'))).toHaveLength(0);
    await fairness.setMinConcurrency('floor', 'Y', 1);
    expect(warnings.find((w) => w.includes('tenants recorded'))).toMatch(
      /add up to 3 slots \(the floors of 2 tenants recorded\) but its live workers have 2/,
    );
    await expect(fairness.setMinConcurrency('floor', 'X', 5)).rejects.toThrow(
      /minConcurrency 5 .* above the tenant's cap \(4\)/,
    );
    await expect(fairness.setMinConcurrency('floor', 'X', 1.5)).rejects.toThrow(
      InvalidTenantQueueOptionsError,
    );
    // Back to none: the sum no longer counts X.
    await fairness.setMinConcurrency('floor', 'X', null);
    expect((await fairness.getTenant('floor', 'X')).minConcurrency).toBe(0);
  });

  it('validates the floor options at bootstrap, naming the field', async () => {
    await expect(
      boot({
        fairness: { defaultConcurrency: 2, defaultMinConcurrency: 3 },
        concurrency: 1,
        running: new Running(),
      }),
    ).rejects.toThrow(/fairness\.defaultMinConcurrency.*must not be above defaultConcurrency/);
    await expect(
      boot({
        fairness: {},
        concurrency: 1,
        running: new Running(),
        tiers: { pro: { maxConcurrency: 2, queues: { floor: { minConcurrency: -1 } } } },
      }),
    ).rejects.toThrow(/tiers\.pro\.queues\.floor\.minConcurrency/);
    await expect(
      boot({
        fairness: {},
        concurrency: 1,
        running: new Running(),
        tiers: { pro: { maxConcurrency: 2, minConcurrency: 3 } },
      }),
    ).rejects.toThrow(/tiers\.pro\.minConcurrency.*must not be above maxConcurrency/);
  });
});
