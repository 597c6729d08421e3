import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Job, QueueEvents, Worker } from 'bullmq';
import {
  InMemoryTenantDirectory,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueInspector,
  TenantFairness,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { BULLMQ_VERSION } from '../../../lib/core/bullmq';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { openRedis, testConnection } from '../../support/test-redis';
import { sleep, waitFor } from '../../support/wait';
import { gateDrained, stateOf } from '../../support/admissions';
import { FairGateRegistry } from '../../../lib/fairness/fair-gate.registry';

/** Jobs held in the processor until the test lets them finish, and how often each started. */
const running = new Map<string, () => void>();
const starts = new Map<string, number>();
/** First attempts of jobs marked `failLater`, running until the test makes them fail. */
const failing = new Map<string, () => void>();

@TenantProcessor('stated', { concurrency: 4 })
class HeldProcessor extends TenantWorkerHost {
  process(job: TenantJob<{ n: number; fail?: boolean; failLater?: boolean }>): Promise<string> {
    // A job marked `fail` fails its first attempt (the retry test retries it from outside);
    // `failLater`, once the test says so.
    starts.set(job.id!, (starts.get(job.id!) ?? 0) + 1);
    if (job.data.fail && job.attemptsMade === 0) return Promise.reject(new Error('first try'));
    if (job.data.failLater && job.attemptsMade === 0) {
      return new Promise((_, reject) =>
        failing.set(job.id!, () => reject(new Error('first try, later'))),
      );
    }
    return new Promise((resolve) => running.set(job.id!, () => resolve(`done ${job.data.n}`)));
  }
}

/**
 * For a check that a job does not start (or not twice): the gate of `queue` had its chance to
 * admit it wrongly (two ticks of its own, the second begun after this call, whatever the load),
 * then a worker with a free slot had time to take it.
 */
const gateHadItsChance = async (moduleRef: TestingModule, queue: string) => {
  const { upkeep } = moduleRef.get(FairGateRegistry).get(queue);
  await upkeep.tick();
  await upkeep.tick();
  await sleep(150);
};

/** The same on a queue with fair keys (its backlog is one sorted set per tenant and lane). */
@TenantProcessor('stated-keyed', { concurrency: 4 })
class HeldKeyedProcessor extends HeldProcessor {}

/**
 * The fair gate's admission and hand-over as BullMQ's own clients see them (what bull-board, a
 * `QueueEvents` listener or an ops script reads): run on both BullMQ majors (`test:bullmq5`).
 */
describe(`fair queue seen through BullMQ's API, the gate's hold (bullmq ${BULLMQ_VERSION})`, () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('state'), {
          directory: {
            useValue: new InMemoryTenantDirectory([
              { id: 'acme', maxConcurrency: 1 },
              { id: 'rated' },
            ]),
          },
        }),
        // Every job through the gate's hold (priorityByTurn: false); the default, turns at add(),
        // is seen through BullMQ's API below. A quick tick makes what a tick does (a freed slot's
        // next job, a stranger counted) come soon after the >= 1 s check interval allows it.
        TenantQueueModule.registerQueue({
          name: 'stated',
          fairness: { tickMs: 50, priorityByTurn: false },
        }),
        TenantQueueModule.registerQueue({
          name: 'stated-keyed',
          fairness: { tickMs: 50, priorityByTurn: false, fairKey: 'job' },
        }),
        // No processor of the module: a plain BullMQ worker runs its jobs (see below).
        TenantQueueModule.registerQueue({
          name: 'bare',
          fairness: { tickMs: 50, priorityByTurn: false },
        }),
      ],
      providers: [HeldProcessor, HeldKeyedProcessor],
    })
    class StateModule {}
    moduleRef = await Test.createTestingModule({ imports: [StateModule] }).compile();
    await moduleRef.init();
  });

  afterAll(async () => {
    for (const finish of running.values()) finish();
    await moduleRef?.close();
  });

  it('admits one job at the cap, holds the next, then hands it over: states and counts agree', async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('stated');
    const bull = queue.bullQueue;
    await moduleRef.get(TenantContext).run('acme', () =>
      queue.addBulk([
        { name: 'work', data: { n: 1 }, opts: { jobId: 'first' } },
        { name: 'work', data: { n: 2 }, opts: { jobId: 'second' } },
      ]),
    );

    await waitFor(() => running.has('first'), 'first job running');
    expect(await stateOf(bull, 'first')).toBe('active');
    const first = await Job.fromId(bull, 'first');
    expect(first!.data).toMatchObject({ n: 1, _tenant: { tenantId: 'acme' } });
    // acme's cap is 1: the second job is held, whatever holding state the gate uses.
    await gateHadItsChance(moduleRef, 'stated');
    expect(running.has('second')).toBe(false);
    expect(await stateOf(bull, 'second')).not.toBe('active');
    expect(await bull.getJobCounts('active')).toEqual({ active: 1 });

    running.get('first')!();
    await waitFor(async () => (await stateOf(bull, 'first')) === 'completed', 'first completed');
    expect((await Job.fromId(bull, 'first'))!.returnvalue).toBe('done 1');
    await waitFor(() => running.has('second'), 'second job handed over');
    expect(await stateOf(bull, 'second')).toBe('active');

    running.get('second')!();
    await waitFor(async () => (await stateOf(bull, 'second')) === 'completed', 'second completed');
    // (bullmq 5 adds `paused` to a count of `waiting`: its paused queues keep their jobs there.)
    expect(
      await bull.getJobCounts('active', 'waiting', 'delayed', 'completed', 'failed'),
    ).toMatchObject({
      active: 0,
      waiting: 0,
      delayed: 0,
      completed: 2,
      failed: 0,
    });
  });

  it("counts a paused BullMQ queue's admitted jobs as waiting (bullmq 5 moves them to `paused`)", async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('stated');
    const bull = queue.bullQueue;
    await bull.pause();
    try {
      await moduleRef
        .get(TenantContext)
        .run('acme', () => queue.add('work', { n: 3 }, { jobId: 'third' }));
      await waitFor(async () => (await stateOf(bull, 'third')) === 'waiting', 'third admitted');
      const summary = await moduleRef.get(TenantQueueInspector).getQueue('stated');
      expect(summary.counts).toMatchObject({ waiting: 1, active: 0 });
    } finally {
      await bull.resume();
    }
    await waitFor(() => running.has('third'), 'third running after resume');
    running.get('third')!();
    await waitFor(async () => (await stateOf(bull, 'third')) === 'completed', 'third completed');
  });

  /** Runs `fn` as tenant acme. */
  const asAcme = <T>(fn: () => Promise<T>) => moduleRef.get(TenantContext).run('acme', fn);

  it('holds a gated job in BullMQ from add() on: delayed, enqueue timestamp, counted, awaitable', async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('stated');
    const bull = queue.bullQueue;
    const events = new QueueEvents('stated', {
      connection: testConnection(),
      prefix: bull.opts.prefix,
    });
    await events.waitUntilReady();
    try {
      const before = Date.now();
      await asAcme(() =>
        queue.addBulk([
          { name: 'work', data: { n: 4 }, opts: { jobId: 'held-a' } },
          { name: 'work', data: { n: 5 }, opts: { jobId: 'held-b' } },
        ]),
      );
      const after = Date.now();
      await waitFor(() => running.has('held-a'), 'held-a running');
      // acme's cap is 1: held-b waits in the gate, which is BullMQ's delayed set.
      const held = (await Job.fromId(bull, 'held-b'))!;
      expect(await held.getState()).toBe('delayed');
      expect(held.timestamp).toBeGreaterThanOrEqual(before);
      expect(held.timestamp).toBeLessThanOrEqual(after);
      expect(held.data).toMatchObject({ n: 5, _tenant: { tenantId: 'acme' } });
      expect(await bull.getJobCounts('active', 'delayed')).toEqual({ active: 1, delayed: 1 });
      expect((await bull.getJobs(['delayed'])).map((job) => job.id)).toEqual(['held-b']);
      // The inspector's queue summary reads the same counts.
      const { counts } = await moduleRef.get(TenantQueueInspector).getQueue('stated');
      expect([counts.active, counts.delayed]).toEqual([1, 1]);
      const finished = held.waitUntilFinished(events, 20_000);

      running.get('held-a')!();
      await waitFor(() => running.has('held-b'), 'held-b admitted and running');
      const running_ = (await Job.fromId(bull, 'held-b'))!;
      // Admitted: no delay left in its options (lag is measured from its enqueue).
      expect(running_.opts.delay ?? 0).toBe(0);
      expect(running_.timestamp).toBe(held.timestamp);
      running.get('held-b')!();
      await expect(finished).resolves.toBe('done 5');
    } finally {
      await events.close();
    }
  });

  it('lets BullMQ remove a gated job (job.remove, clean, drain): it never runs, the tenant goes on', async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('stated');
    const bull = queue.bullQueue;
    const fairness = moduleRef.get(TenantFairness);
    await asAcme(() =>
      queue.addBulk([
        { name: 'work', data: { n: 6 }, opts: { jobId: 'rm-run' } },
        { name: 'work', data: { n: 7 }, opts: { jobId: 'rm-1' } },
        { name: 'work', data: { n: 8 }, opts: { jobId: 'rm-2' } },
        { name: 'work', data: { n: 9 }, opts: { jobId: 'rm-3' } },
        { name: 'work', data: { n: 10 }, opts: { jobId: 'rm-last' } },
      ]),
    );
    await waitFor(() => running.has('rm-run'), 'rm-run running');
    await (await Job.fromId(bull, 'rm-1'))!.remove();
    expect(await bull.clean(0, 1, 'delayed')).toHaveLength(1);
    // drain(true) takes the delayed jobs too: the other two held ones.
    await bull.drain(true);
    expect(await bull.getJobCounts('delayed')).toEqual({ delayed: 0 });
    await asAcme(() => queue.add('work', { n: 11 }, { jobId: 'rm-after' }));
    running.get('rm-run')!();
    // The gate drops the removed ids at their turn (no slot taken) and runs the next job.
    await waitFor(() => running.has('rm-after'), 'the job added after the removals runs');
    for (const id of ['rm-1', 'rm-2', 'rm-3', 'rm-last']) {
      expect(running.has(id)).toBe(false);
      expect(await stateOf(bull, id)).toBe('absent');
    }
    running.get('rm-after')!();
    await waitFor(async () => (await stateOf(bull, 'rm-after')) === 'completed', 'rm-after done');
    await gateDrained(fairness, 'stated', ['acme']);
  });

  // A capped tenant's picks each met one removed id (at most 8 a call at cap 1, so about 160 a
  // second at this tickMs): after `clean` of thousands of held jobs its next job waited minutes
  // (an operator's trial: 300 new jobs still delayed a minute after 4,385 were cleaned).
  it.each([
    ['stated', false],
    ['stated-keyed', true],
  ])(
    "starts a capped tenant's next job at once after thousands of its held jobs were cleaned (%s)",
    async (name, keyed) => {
      const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>(name);
      const bull = queue.bullQueue;
      const fairness = moduleRef.get(TenantFairness);
      const key = (i: number) => (keyed ? { fairKey: `u${i % 5}` } : {});
      const id = (suffix: string) => `${name}-mass-${suffix}`;
      await asAcme(() => queue.add('work', { n: 30 }, { jobId: id('run'), ...key(0) }));
      await waitFor(() => running.has(id('run')), 'the first job running');
      const held = 3000;
      for (let from = 0; from < held; from += 1000) {
        await asAcme(() =>
          queue.addBulk(
            Array.from({ length: 1000 }, (_, i) => ({
              name: 'work',
              data: { n: 1000 + from + i },
              opts: { jobId: id(`${from + i}`), ...key(i) },
            })),
          ),
        );
      }
      expect(await bull.clean(0, 10 * held, 'delayed')).toHaveLength(held);
      await asAcme(() => queue.add('work', { n: 31 }, { jobId: id('after'), ...key(1) }));
      const freed = Date.now();
      running.get(id('run'))!();
      await waitFor(() => running.has(id('after')), 'the job added after the clean runs', 5_000);
      expect(Date.now() - freed).toBeLessThan(3_000);
      expect([...running.keys()].filter((k) => k.startsWith(id('')) && /\d$/.test(k))).toEqual([]);
      running.get(id('after'))!();
      await waitFor(async () => (await stateOf(bull, id('after'))) === 'completed', 'done');
      await gateDrained(fairness, name, ['acme']);
    },
  );

  // A pick that met only removed ids still took a step of its tenant's rate schedule: at one
  // start a second, 3,000 removed ids put the next job 3 s late (9 minutes at 20 an hour). Here
  // one start per 5 s, so no held job is admitted while the 3,000 are added on a busy machine.
  it("keeps a rate-limited tenant's schedule when its held jobs were removed", async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('stated');
    const bull = queue.bullQueue;
    const fairness = moduleRef.get(TenantFairness);
    const context = moduleRef.get(TenantContext);
    await fairness.setRateLimit('stated', 'rated', { max: 12, per: 60_000, burst: 1 });
    try {
      const asRated = <T>(fn: () => Promise<T>) => context.run('rated', fn);
      await asRated(() => queue.add('work', { n: 40 }, { jobId: 'rate-first' }));
      await waitFor(() => running.has('rate-first'), 'the first job running');
      const first = Date.now();
      running.get('rate-first')!();
      for (let from = 0; from < 3000; from += 1000) {
        await asRated(() =>
          queue.addBulk(
            Array.from({ length: 1000 }, (_, i) => ({
              name: 'work',
              data: { n: 5000 + from + i },
              opts: { jobId: `rate-${from + i}` },
            })),
          ),
        );
      }
      expect(Date.now() - first).toBeLessThan(5_000);
      expect(await bull.clean(0, 10_000, 'delayed')).toHaveLength(3000);
      await asRated(() => queue.add('work', { n: 41 }, { jobId: 'rate-after' }));
      // Its turn is one interval (5 s) after the first job's: not one more per 1,000 removed.
      await waitFor(() => running.has('rate-after'), 'the job added after the clean runs', 15_000);
      expect(Date.now() - first).toBeLessThan(8_000);
      running.get('rate-after')!();
      await waitFor(async () => (await stateOf(bull, 'rate-after')) === 'completed', 'done');
      await gateDrained(fairness, 'stated', ['rated']);
    } finally {
      // Nothing of this tenant left running for the next case.
      for (const [id, finish] of running) if (id.startsWith('rate-')) finish();
      await fairness.setRateLimit('stated', 'rated', null);
    }
  }, 30_000);

  // The gate's backlog keeps a removed job's id until its turn; the id added again is a second
  // entry. One gate call that reached both (here a raised cap) once admitted the job twice: it
  // ran twice at once and its tenant kept a slot for good.
  it('runs a held job removed and added again under its id once, and frees its slot', async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('stated');
    const bull = queue.bullQueue;
    const fairness = moduleRef.get(TenantFairness);
    await asAcme(() =>
      queue.addBulk([
        { name: 'work', data: { n: 20 }, opts: { jobId: 'again-run' } },
        { name: 'work', data: { n: 21 }, opts: { jobId: 'again-1' } },
        { name: 'work', data: { n: 22 }, opts: { jobId: 'again-2' } },
      ]),
    );
    await waitFor(() => running.has('again-run'), 'again-run running');
    await (await Job.fromId(bull, 'again-1'))!.remove();
    await asAcme(() => queue.add('work', { n: 23 }, { jobId: 'again-1' }));
    expect(await stateOf(bull, 'again-1')).toBe('delayed');
    await fairness.setConcurrency('stated', 'acme', 5);
    try {
      await waitFor(
        () => running.has('again-1') && running.has('again-2'),
        'the raised cap admits the held jobs',
      );
      await gateHadItsChance(moduleRef, 'stated');
      for (const id of ['again-run', 'again-1', 'again-2']) running.get(id)!();
      for (const id of ['again-run', 'again-1', 'again-2']) {
        await waitFor(async () => (await stateOf(bull, id)) === 'completed', `${id} completed`);
        expect([id, starts.get(id)]).toEqual([id, 1]);
      }
      expect((await bull.getJobCounts('active')).active).toBe(0);
      await gateDrained(fairness, 'stated', ['acme']);
    } finally {
      await fairness.setConcurrency('stated', 'acme', null);
    }
  });

  it('frees the slot of an admitted job removed and added again under its id at once', async () => {
    // The four worker slots busy with rated's jobs: acme's job is admitted (counted at
    // its cap of 1) and waits in BullMQ, where it is removed and added again under its id.
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('stated');
    const bull = queue.bullQueue;
    const fairness = moduleRef.get(TenantFairness);
    const fillers = [1, 2, 3, 4].map((n) => `readd-busy-${n}`);
    await moduleRef
      .get(TenantContext)
      .run('rated', () =>
        queue.addBulk(fillers.map((jobId, n) => ({ name: 'work', data: { n }, opts: { jobId } }))),
      );
    await waitFor(() => fillers.every((id) => running.has(id)), 'the workers busy');
    await asAcme(() => queue.add('work', { n: 30 }, { jobId: 'readd-x' }));
    await waitFor(async () => (await stateOf(bull, 'readd-x')) === 'waiting', 'readd-x admitted');
    expect((await fairness.getTenant('stated', 'acme')).inFlight).toBe(1);
    await (await Job.fromId(bull, 'readd-x'))!.remove();
    await asAcme(() => queue.add('work', { n: 31 }, { jobId: 'readd-x' }));
    await asAcme(() => queue.add('work', { n: 32 }, { jobId: 'readd-y' }));
    for (const id of fillers) running.get(id)!();
    await waitFor(() => running.has('readd-x'), 'the job added again runs');
    running.get('readd-x')!();
    await waitFor(() => running.has('readd-y'), 'the next one runs');
    running.get('readd-y')!();
    for (const id of ['readd-x', 'readd-y']) {
      await waitFor(async () => (await stateOf(bull, id)) === 'completed', `${id} completed`);
      expect([id, starts.get(id)]).toEqual([id, 1]);
    }
    await gateDrained(fairness, 'stated', ['acme', 'rated']);
  });

  it('keeps no in-flight count of 0 for a tenant whose jobs wait (a paused one)', async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('stated');
    const fairness = moduleRef.get(TenantFairness);
    const redis = openRedis();
    const counts = `${queue.definition.bullPrefix}:~fair:inf`;
    try {
      await asAcme(() =>
        queue.addBulk([
          { name: 'work', data: { n: 40 }, opts: { jobId: 'inf-run' } },
          { name: 'work', data: { n: 41 }, opts: { jobId: 'inf-held' } },
        ]),
      );
      await waitFor(() => running.has('inf-run'), 'inf-run running');
      expect(await redis.hget(counts, 'acme')).toBe('1');
      await fairness.pause('stated', 'acme');
      running.get('inf-run')!();
      await waitFor(
        async () => (await fairness.getTenant('stated', 'acme')).inFlight === 0,
        'its slot back',
      );
      expect((await fairness.getTenant('stated', 'acme')).backlog).toBe(1);
      expect(await redis.hexists(counts, 'acme')).toBe(0);
      await fairness.resume('stated', 'acme');
      await waitFor(() => running.has('inf-held'), 'inf-held running');
      running.get('inf-held')!();
      await gateDrained(fairness, 'stated', ['acme']);
    } finally {
      await fairness.resume('stated', 'acme');
      await redis.quit();
    }
  });

  it('keeps the cap for a failed job retried from outside (job.retry, as bull-board does)', async () => {
    const queue = moduleRef
      .get(TenantQueueRegistry)
      .getQueue<{ n: number; fail?: boolean }>('stated');
    const bull = queue.bullQueue;
    await asAcme(() => queue.add('work', { n: 12, fail: true }, { jobId: 'retried', attempts: 1 }));
    await waitFor(async () => (await stateOf(bull, 'retried')) === 'failed', 'retried failed');
    await (await Job.fromId(bull, 'retried'))!.retry();
    await waitFor(() => running.has('retried'), 'the retry runs');
    // The gate counts it against acme once it saw it running at two ticks (about a second).
    await waitFor(
      async () => (await moduleRef.get(TenantFairness).getTenant('stated', 'acme')).inFlight === 1,
      'the retried job counted',
    );
    await asAcme(() => queue.add('work', { n: 13 }, { jobId: 'after-retry' }));
    await gateHadItsChance(moduleRef, 'stated');
    expect(running.has('after-retry')).toBe(false);
    expect(await stateOf(bull, 'after-retry')).toBe('delayed');
    running.get('retried')!();
    await waitFor(() => running.has('after-retry'), 'after-retry runs once the retry ended');
    running.get('after-retry')!();
    await waitFor(async () => (await stateOf(bull, 'after-retry')) === 'completed', 'done');
  });

  it.each(['stated', 'stated-keyed'])(
    'counts a promoted held job once through its retry: its backoff is kept, no slot is lost (%s)',
    async (name) => {
      const fairness = moduleRef.get(TenantFairness);
      const queue = moduleRef
        .get(TenantQueueRegistry)
        .getQueue<{ n: number; failLater?: boolean }>(name);
      const bull = queue.bullQueue;
      const inFlight = async () => (await fairness.getTenant(name, 'acme')).inFlight;
      await fairness.setConcurrency(name, 'acme', 2);
      try {
        await asAcme(() =>
          queue.addBulk([
            { name: 'work', data: { n: 20 }, opts: { jobId: `${name}-long-1` } },
            { name: 'work', data: { n: 21 }, opts: { jobId: `${name}-long-2` } },
            {
              name: 'work',
              data: { n: 22, failLater: true },
              opts: {
                jobId: `${name}-promoted`,
                attempts: 2,
                backoff: { type: 'fixed', delay: 1500 },
              },
            },
            { name: 'work', data: { n: 23 }, opts: { jobId: `${name}-behind` } },
          ]),
        );
        await waitFor(
          () => running.has(`${name}-long-1`) && running.has(`${name}-long-2`),
          'two run at cap 2',
        );
        expect(await stateOf(bull, `${name}-promoted`)).toBe('delayed');
        // Promoted from outside, it runs past the cap, and the gate counts it once seen running.
        await (await Job.fromId(bull, `${name}-promoted`))!.promote();
        await waitFor(() => failing.has(`${name}-promoted`), 'the promoted job runs');
        await waitFor(async () => (await inFlight()) === 3, 'the promoted job counted');
        // Its first attempt fails: BullMQ keeps it in `delayed` for its 1.5 s backoff, where the
        // gate must not take it for one of its own held jobs when the two long jobs end.
        failing.get(`${name}-promoted`)!();
        await waitFor(
          async () => (await stateOf(bull, `${name}-promoted`)) === 'delayed',
          'its backoff',
        );
        const backoffFrom = Date.now();
        running.get(`${name}-long-1`)!();
        running.get(`${name}-long-2`)!();
        await waitFor(() => running.has(`${name}-behind`), 'the held job behind it runs');
        await waitFor(
          () => running.has(`${name}-promoted`),
          'the retry runs after its backoff',
          15_000,
        );
        expect(Date.now() - backoffFrom).toBeGreaterThanOrEqual(1000);
        running.get(`${name}-promoted`)!();
        running.get(`${name}-behind`)!();
        await waitFor(async () => (await inFlight()) === 0, 'every slot back');
        // The cap is still 2: two new jobs run together.
        await asAcme(() =>
          queue.addBulk([
            { name: 'work', data: { n: 24 }, opts: { jobId: `${name}-pair-1` } },
            { name: 'work', data: { n: 25 }, opts: { jobId: `${name}-pair-2` } },
          ]),
        );
        await waitFor(
          () => running.has(`${name}-pair-1`) && running.has(`${name}-pair-2`),
          'two run together',
        );
        running.get(`${name}-pair-1`)!();
        running.get(`${name}-pair-2`)!();
        await waitFor(async () => (await inFlight()) === 0, 'done');
      } finally {
        await fairness.setConcurrency(name, 'acme', null);
      }
    },
  );

  it('frees the slots of jobs a plain BullMQ worker ran, from what Redis holds', async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('bare');
    const bull = queue.bullQueue;
    const done: string[] = [];
    const worker = new Worker('bare', async (job) => void done.push(job.id!), {
      connection: testConnection(),
      prefix: bull.opts.prefix,
    });
    try {
      const started = Date.now();
      await asAcme(() =>
        queue.addBulk(
          [1, 2, 3, 4].map((n) => ({ name: 'work', data: { n }, opts: { jobId: `bare-${n}` } })),
        ),
      );
      // acme's cap is 1 and the plain worker tells the gate nothing: each slot is freed by the
      // gate's check of BullMQ's job (about a second), not by the 30 s lease.
      await waitFor(() => done.length === 4, 'all four ran', 20_000);
      expect(done).toEqual(['bare-1', 'bare-2', 'bare-3', 'bare-4']);
      expect(Date.now() - started).toBeLessThan(15_000);
      await waitFor(
        async () => (await moduleRef.get(TenantFairness).getTenant('bare', 'acme')).inFlight === 0,
        'no slot held',
      );
    } finally {
      await worker.close();
    }
  });

  it('obliterate takes the gated jobs too: none runs afterwards and the queue goes on', async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('bare');
    const bull = queue.bullQueue;
    await asAcme(() =>
      queue.addBulk(
        [1, 2, 3].map((n) => ({ name: 'work', data: { n }, opts: { jobId: `ob-${n}` } })),
      ),
    );
    expect(await bull.getJobCounts('delayed', 'waiting')).toMatchObject({ delayed: 2, waiting: 1 });
    await bull.obliterate({ force: true });
    const done: string[] = [];
    const worker = new Worker('bare', async (job) => void done.push(job.id!), {
      connection: testConnection(),
      prefix: bull.opts.prefix,
    });
    try {
      await asAcme(() => queue.add('work', { n: 4 }, { jobId: 'ob-after' }));
      await waitFor(() => done.includes('ob-after'), 'the job added after obliterate runs', 20_000);
      await gateHadItsChance(moduleRef, 'bare');
      expect(done).toEqual(['ob-after']);
      await gateDrained(moduleRef.get(TenantFairness), 'bare', ['acme']);
    } finally {
      await worker.close();
    }
  });
});

/** Jobs of the by-turn queue held in its processor until the test lets them finish. */
const turned = new Map<string, () => void>();

@TenantProcessor('turned', { concurrency: 1 })
class TurnProcessor extends TenantWorkerHost {
  process(job: TenantJob<{ n: number; fail?: boolean }>): Promise<string> {
    if (job.data.fail && job.attemptsMade === 0) return Promise.reject(new Error('first try'));
    return new Promise((resolve) => turned.set(job.id!, () => resolve(`done ${job.data.n}`)));
  }
}

/**
 * The default, turns at add(): a job of a tenant no rule holds is in BullMQ's prioritized set at
 * its turn from add() on, so BullMQ's own clients see and act on it as on any prioritized job;
 * the gate holds nothing for it (no slot to keep right).
 */
describe(`fair queue seen through BullMQ's API, by turn (bullmq ${BULLMQ_VERSION})`, () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('turned')),
        TenantQueueModule.registerQueue({ name: 'turned', fairness: { tickMs: 50 } }),
        // No processor of the module: a plain BullMQ worker runs its jobs.
        TenantQueueModule.registerQueue({ name: 'plainly', fairness: { tickMs: 50 } }),
      ],
      providers: [TurnProcessor],
    })
    class TurnModule {}
    moduleRef = await Test.createTestingModule({ imports: [TurnModule] }).compile();
    await moduleRef.init();
  });

  afterAll(async () => {
    for (const finish of turned.values()) finish();
    await moduleRef?.close();
  });

  const as = <T>(tenant: string, fn: () => Promise<T>) =>
    moduleRef.get(TenantContext).run(tenant, fn);
  const queueOf = (name: string) =>
    moduleRef.get(TenantQueueRegistry).getQueue<{ n: number; fail?: boolean }>(name);

  it('shows a waiting job from add() on: prioritized, enqueue timestamp, counted, listed, awaitable', async () => {
    const queue = queueOf('turned');
    const bull = queue.bullQueue;
    const events = new QueueEvents('turned', {
      connection: testConnection(),
      prefix: bull.opts.prefix,
    });
    await events.waitUntilReady();
    try {
      const before = Date.now();
      await as('a', () =>
        queue.addBulk([
          { name: 'work', data: { n: 1 }, opts: { jobId: 'turn-1' } },
          { name: 'work', data: { n: 2 }, opts: { jobId: 'turn-2' } },
        ]),
      );
      const after = Date.now();
      await waitFor(() => turned.has('turn-1'), 'turn-1 running');
      const waiting = (await Job.fromId(bull, 'turn-2'))!;
      expect(await waiting.getState()).toBe('prioritized');
      expect(waiting.timestamp).toBeGreaterThanOrEqual(before);
      expect(waiting.timestamp).toBeLessThanOrEqual(after);
      expect(waiting.opts.priority).toBeUndefined();
      expect(waiting.data).toMatchObject({ n: 2, _tenant: { tenantId: 'a' } });
      // The caller's id stays in the options it gave; an id the module drew is the job's only.
      expect(waiting.opts.jobId).toBe('turn-2');
      const drawn = await as('a', () => queue.add('work', { n: 3 }));
      const stored = (await Job.fromId(bull, drawn.id))!;
      expect(stored.id).toBe(drawn.id);
      expect(stored.opts.jobId).toBeUndefined();
      await stored.remove();
      expect(await bull.getJobCounts('active', 'prioritized', 'delayed')).toEqual({
        active: 1,
        prioritized: 1,
        delayed: 0,
      });
      expect((await bull.getJobs(['prioritized'])).map((job) => job.id)).toEqual(['turn-2']);
      const finished = waiting.waitUntilFinished(events, 20_000);
      turned.get('turn-1')!();
      await waitFor(() => turned.has('turn-2'), 'turn-2 running');
      turned.get('turn-2')!();
      await expect(finished).resolves.toBe('done 2');
    } finally {
      await events.close();
    }
  });

  it('keeps a job added by turn to a paused BullMQ queue until resume, as BullMQ does', async () => {
    const queue = queueOf('turned');
    const bull = queue.bullQueue;
    await bull.pause();
    try {
      await as('p', () => queue.add('work', { n: 7 }, { jobId: 'paused-turn' }));
      expect(await stateOf(bull, 'paused-turn')).toBe('prioritized');
      await gateHadItsChance(moduleRef, 'turned');
      expect(turned.has('paused-turn')).toBe(false);
    } finally {
      await bull.resume();
    }
    await waitFor(() => turned.has('paused-turn'), 'paused-turn running after resume');
    turned.get('paused-turn')!();
    await waitFor(
      async () => (await stateOf(bull, 'paused-turn')) === 'completed',
      'paused-turn completed',
    );
  });

  it('lets BullMQ remove a waiting job (job.remove, clean, drain): it never runs, the tenant goes on', async () => {
    const queue = queueOf('turned');
    const bull = queue.bullQueue;
    await as('b', () =>
      queue.addBulk(
        ['rm-run', 'rm-1', 'rm-2', 'rm-3', 'rm-last'].map((jobId, n) => ({
          name: 'work',
          data: { n },
          opts: { jobId },
        })),
      ),
    );
    await waitFor(() => turned.has('rm-run'), 'rm-run running');
    await (await Job.fromId(bull, 'rm-1'))!.remove();
    expect(await bull.clean(0, 1, 'prioritized')).toHaveLength(1);
    await bull.drain();
    expect(await bull.getJobCounts('prioritized')).toEqual({ prioritized: 0 });
    await as('b', () => queue.add('work', { n: 9 }, { jobId: 'rm-after' }));
    turned.get('rm-run')!();
    await waitFor(() => turned.has('rm-after'), 'the job added after the removals runs');
    for (const id of ['rm-1', 'rm-2', 'rm-3', 'rm-last']) {
      expect(turned.has(id)).toBe(false);
      expect(await stateOf(bull, id)).toBe('absent');
    }
    turned.get('rm-after')!();
    await waitFor(async () => (await stateOf(bull, 'rm-after')) === 'completed', 'rm-after done');
    await waitFor(async () => {
      const state = await moduleRef.get(TenantFairness).getTenant('turned', 'b');
      return state.inFlight === 0 && state.backlog === 0 && state.queuedByTurn === 0;
    }, 'nothing in flight or queued for b');
  });

  it('runs a failed job retried from outside (job.retry, as bull-board does) at its turn', async () => {
    const queue = queueOf('turned');
    const bull = queue.bullQueue;
    await as('c', () =>
      queue.add('work', { n: 1, fail: true }, { jobId: 'c-retried', attempts: 1 }),
    );
    await waitFor(async () => (await stateOf(bull, 'c-retried')) === 'failed', 'c-retried failed');
    await (await Job.fromId(bull, 'c-retried'))!.retry();
    await waitFor(() => turned.has('c-retried'), 'the retry runs');
    turned.get('c-retried')!();
    await waitFor(async () => (await stateOf(bull, 'c-retried')) === 'completed', 'done');
  });

  it('needs nothing from a plain BullMQ worker: it runs the jobs in their turns, no slot is held', async () => {
    const queue = queueOf('plainly');
    const bull = queue.bullQueue;
    await as('d', () =>
      queue.addBulk(
        [1, 2, 3, 4, 5, 6, 7].map((n) => ({
          name: 'work',
          data: { n },
          opts: { jobId: `d-${n}` },
        })),
      ),
    );
    await as('e', () =>
      queue.addBulk([1, 2].map((n) => ({ name: 'work', data: { n }, opts: { jobId: `e-${n}` } }))),
    );
    const done: string[] = [];
    const worker = new Worker('plainly', async (job) => void done.push(job.id!), {
      connection: testConnection(),
      prefix: bull.opts.prefix,
    });
    try {
      await waitFor(() => done.length === 9, 'all nine ran');
      // Turns: d (7 jobs, more than maxConsecutive, 5) takes one level a job; e, small (2 jobs),
      // has both at the level served when it woke up, right after d's first.
      expect(done).toEqual(['d-1', 'e-1', 'e-2', 'd-2', 'd-3', 'd-4', 'd-5', 'd-6', 'd-7']);
      const state = await moduleRef.get(TenantFairness).getTenant('plainly', 'd');
      expect([state.inFlight, state.backlog]).toEqual([0, 0]);
    } finally {
      await worker.close();
    }
  });

  it('obliterate takes the waiting jobs too: none runs afterwards and the queue goes on', async () => {
    const queue = queueOf('plainly');
    const bull = queue.bullQueue;
    await as('f', () =>
      queue.addBulk(
        [1, 2, 3].map((n) => ({ name: 'work', data: { n }, opts: { jobId: `ob-${n}` } })),
      ),
    );
    expect(await bull.getJobCounts('prioritized')).toEqual({ prioritized: 3 });
    await bull.obliterate({ force: true });
    const done: string[] = [];
    const worker = new Worker('plainly', async (job) => void done.push(job.id!), {
      connection: testConnection(),
      prefix: bull.opts.prefix,
    });
    try {
      await as('f', () => queue.add('work', { n: 4 }, { jobId: 'ob-after' }));
      await waitFor(() => done.includes('ob-after'), 'the job added after obliterate runs');
      await gateHadItsChance(moduleRef, 'plainly');
      expect(done).toEqual(['ob-after']);
    } finally {
      await worker.close();
    }
  });
});
