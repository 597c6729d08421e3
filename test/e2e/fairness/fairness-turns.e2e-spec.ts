import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Job, Queue } from 'bullmq';
import {
  InMemoryTenantDirectory,
  TenantContext,
  TenantFairness,
  TenantQueueInspector,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantTiers,
} from '../../../lib';
import { FairGateRegistry } from '../../../lib/fairness/fair-gate.registry';
import { FairnessStateSource } from '../../../lib/fairness/fairness-state.source';
import { Started, bootFairApp } from '../../fixtures/fairness-app';
import { enqueue, many } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { openRedis, testConnection } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

/**
 * `priorityByTurn`: a job whose tenant no rule holds skips the gate, into BullMQ's prioritized
 * set at its turn (fair-turns.lua); a rule (pause, cap, rate limit, floor) takes the tenant's
 * queued jobs back into the gate.
 */
describe('priority by turn: turns as BullMQ priorities from add() on', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  const bullQueue = (app: TestingModule) => app.get(TenantQueueRegistry).getQueue('fair').bullQueue;

  it('puts each job in BullMQ at its turn from add() on: interleaved tenants, the state and counts BullMQ gives', async () => {
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { priorityByTurn: true },
      concurrency: 0,
    });
    const a = await enqueue(moduleRef, 'fair', 'A', many(6));
    const b = await enqueue(moduleRef, 'fair', 'B', many(3));
    const queue = bullQueue(moduleRef);
    const job = await Job.fromId(queue, a[0].id!);
    expect(await job!.getState()).toBe('prioritized');
    expect(job!.timestamp).toBeLessThanOrEqual(Date.now());
    expect(job!.opts.delay ?? 0).toBe(0);
    expect(await queue.getJobCounts('prioritized', 'delayed', 'wait')).toEqual({
      prioritized: 9,
      delayed: 0,
      wait: 0,
    });
    // BullMQ's own order (lowest score first): A, 6 jobs (more than maxConsecutive, 5), takes one
    // level a job; B, small (3 jobs) and waking up while one job waits at the current level, has
    // all three there, right after A's first.
    const order = (await queue.getJobs(['prioritized'], 0, -1, true)).map((j) => j.id);
    const tenantOf = new Map<string, string>([
      ...a.map((j) => [j.id!, 'A'] as [string, string]),
      ...b.map((j) => [j.id!, 'B'] as [string, string]),
    ]);
    expect(order.map((id) => tenantOf.get(id!)).join('')).toBe('ABBBAAAAA');
    // The inspector's explain: where it stands in BullMQ's order.
    const explained = await moduleRef.get(TenantQueueInspector).explain('fair', a[5].id!);
    expect(explained.state).toBe('prioritized');
    expect(explained.summary).toContain('8 job(s) ahead of it');
    // The gate holds none of them; the tenants' depth counts them.
    const fairness = moduleRef.get(TenantFairness);
    const state = await fairness.getTenant('fair', 'A');
    expect([state.backlog, state.inFlight]).toEqual([0, 0]);
  });

  it("starts a light tenant's jobs within a turn of a flood, and drains both", async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { priorityByTurn: true },
      concurrency: 2,
      started,
    });
    await enqueue(moduleRef, 'fair', 'A', many(400, { ms: 2 }));
    await waitFor(() => started.length >= 10, 'the flood running');
    const from = started.length;
    await enqueue(moduleRef, 'fair', 'B', many(4, { ms: 2 }));
    await waitFor(() => started.filter((s) => s.tenantId === 'B').length === 4, 'B done');
    const lastB = started.map((s) => s.tenantId).lastIndexOf('B');
    // A and B alternate from B's add on: B's 4 jobs have at most 4 + the 2 running of A's ahead.
    expect(started.slice(from, lastB).filter((s) => s.tenantId === 'A').length).toBeLessThanOrEqual(
      7,
    );
    await waitFor(() => started.length === 404, 'all done', 30_000);
  });

  it('gives weights 3:1 while both are backlogged', async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { priorityByTurn: true },
      concurrency: 0,
      started,
    });
    const fairness = moduleRef.get(TenantFairness);
    await fairness.setWeight('fair', 'heavy', 3);
    await enqueue(moduleRef, 'fair', 'heavy', many(300));
    await enqueue(moduleRef, 'fair', 'light', many(300));
    const queue = bullQueue(moduleRef);
    const first = (await queue.getJobs(['prioritized'], 0, 199, true)).map(
      (j) => (j.data as { _tenant: { tenantId: string } })._tenant.tenantId,
    );
    // 3 and 1 a level from the first: 50 levels of 4.
    const heavy = first.filter((t) => t === 'heavy').length;
    expect(heavy).toBe(150);
    expect(first.length - heavy).toBe(50);
  });

  it("writes each job once, as BullMQ's own add writes it: fields, options, events, a known id; a held job keeps its backoff", async () => {
    moduleRef = await bootFairApp({ prefix: uniquePrefix(), fairness: {}, concurrency: 0 });
    const queue = bullQueue(moduleRef);
    const prefix = queue.opts.prefix!;
    // BullMQ's own add of the same job into a queue of its own, the same options (the fixture's
    // queue adds removeOnComplete and removeOnFail by default).
    const twin = new Queue('twin', { connection: testConnection(), prefix });
    const redis = openRedis();
    // BullMQ's events of a job as its QueueEvents would read them (the queue's stream, in order).
    const eventsOf = async (id: string) =>
      (await redis.xrange(`${prefix}:fair:events`, '-', '+'))
        .map(([, fields]) => fields)
        .filter((fields) => fields[fields.indexOf('jobId') + 1] === id)
        .map((fields) => fields[fields.indexOf('event') + 1]);
    try {
      const opts = {
        attempts: 4,
        backoff: { type: 'exponential', delay: 1500, jitter: 0.25 },
        keepLogs: 3,
        removeOnComplete: true,
        removeOnFail: true,
      };
      await enqueue(moduleRef, 'fair', 'acme', [{ n: 1 }], { ...opts, jobId: 'same' });
      await twin.add('work', { n: 1 }, { ...opts, jobId: 'same' });
      const ours = await redis.hgetall(`${prefix}:fair:same`);
      const theirs = await redis.hgetall(`${prefix}:twin:same`);
      expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
      // BullMQ's short names (keepLogs is `kl`), the caller's id kept in the options.
      expect(JSON.parse(ours.opts)).toEqual(JSON.parse(theirs.opts));
      expect(ours.name).toBe('work');
      expect(ours.delay).toBe('0');
      expect(Number(ours.priority)).toBeGreaterThan(0);
      expect(JSON.parse(ours.data)).toMatchObject({ n: 1, _tenant: { tenantId: 'acme' } });
      const job = (await Job.fromId(queue, 'same'))!;
      expect(await job.getState()).toBe('prioritized');
      expect(job.opts).toEqual((await Job.fromId(twin, 'same'))!.opts);
      // A known id writes nothing, as BullMQ's add.
      await enqueue(moduleRef, 'fair', 'acme', [{ n: 2 }], { ...opts, jobId: 'same' });
      expect(await redis.hgetall(`${prefix}:fair:same`)).toEqual(ours);

      // A capped tenant's jobs are held in the gate: held, then admitted, each keeps its backoff
      // (only the top-level `delay` option is the hold's).
      await moduleRef.get(TenantFairness).setConcurrency('fair', 'capped', 1);
      await enqueue(moduleRef, 'fair', 'capped', [{ n: 3 }, { n: 4 }], opts);
      const capped = await queue.getJobs(['delayed', 'prioritized', 'waiting']);
      const mine = capped.filter((j) => (j.data as { n: number }).n >= 3);
      await waitFor(async () => (await queue.getJobCounts('delayed')).delayed === 1, 'one held');
      for (const j of mine) {
        const now = (await Job.fromId(queue, j.id!))!;
        expect(now.opts.backoff).toEqual(opts.backoff);
        const held = (await now.getState()) === 'delayed';
        expect(now.opts.delay).toBe(held ? now.delay : 0);
        if (held) expect(now.delay).toBeGreaterThan(365 * 24 * 3600_000);
      }
      expect(await eventsOf('same')).toEqual(['added', 'waiting', 'duplicated']);
      for (const j of mine) {
        const held = (await j.getState()) === 'delayed';
        expect(await eventsOf(j.id!)).toEqual(
          held ? ['added', 'delayed'] : ['added', 'delayed', 'waiting'],
        );
      }
    } finally {
      await twin.close();
      redis.disconnect();
    }
  });

  it('takes an addBulk of 70,000 jobs (35 store calls in one MULTI): every job in its turn, in add order', async () => {
    // A bulk this size takes seconds on a fair queue: the app raises its enqueue bound.
    @Module({
      imports: [
        ...testRootImports(uniquePrefix(), { enqueueTimeoutMs: 120_000 }),
        TenantQueueModule.registerQueue({ name: 'fair', fairness: {} }),
      ],
    })
    class BigBulkModule {}
    moduleRef = await Test.createTestingModule({ imports: [BigBulkModule] }).compile();
    await moduleRef.init();
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('fair');
    const jobs = Array.from({ length: 70_000 }, (_, n) => ({ name: 'work', data: { n } }));
    const added = await moduleRef.get(TenantContext).run('bulk', () => queue.addBulk(jobs));
    expect(added).toHaveLength(70_000);
    const bull = bullQueue(moduleRef);
    expect(await bull.getJobCounts('prioritized')).toEqual({ prioritized: 70_000 });
    // 35 store calls in one MULTI: the tenant's levels go on from call to call, so BullMQ serves
    // the jobs in add order.
    const redis = openRedis();
    try {
      const order = await redis.zrange(bull.keys.prioritized, '0', '-1');
      expect(order).toEqual(added.map((job) => job.id));
    } finally {
      redis.disconnect();
    }
    expect((await moduleRef.get(TenantFairness).getTenant('fair', 'bulk')).queuedByTurn).toBe(
      70_000,
    );
  }, 180_000);

  it("holds a capped tenant's addBulk of 4,500 jobs (3 store calls in one MULTI) in add order, and the add's kick admits its first two", async () => {
    // A tick far away: only the add's own kick admits anything soon.
    @Module({
      imports: [
        ...testRootImports(uniquePrefix()),
        TenantQueueModule.registerQueue({ name: 'fair', fairness: { tickMs: 60_000 } }),
      ],
    })
    class CappedBulkModule {}
    moduleRef = await Test.createTestingModule({ imports: [CappedBulkModule] }).compile();
    await moduleRef.init();
    const fairness = moduleRef.get(TenantFairness);
    await fairness.setConcurrency('fair', 'K', 2);
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('fair');
    const jobs = Array.from({ length: 4_500 }, (_, n) => ({ name: 'work', data: { n } }));
    const added = await moduleRef.get(TenantContext).run('K', () => queue.addBulk(jobs));
    const bull = bullQueue(moduleRef);
    await waitFor(
      async () => (await bull.getJobCounts('prioritized')).prioritized === 2,
      'the kick admitting two',
      5_000,
    );
    expect(await bull.getJobCounts('prioritized', 'delayed')).toEqual({
      prioritized: 2,
      delayed: 4_498,
    });
    const state = await fairness.getTenant('fair', 'K');
    expect([state.backlog, state.inFlight]).toEqual([4_498, 2]);
    // The gate admits from the head of the tenant's backlog: the first two added.
    const admitted = (await bull.getJobs(['prioritized'])).map((job) => job.id).sort();
    expect(admitted).toEqual([added[0].id, added[1].id].sort());
    // Its backlog is the rest in add order, across the calls' seams (2,000 and 4,000).
    const gated = await moduleRef.get(FairnessStateSource).gateJobs('fair', 'K', 4_500);
    expect(gated.map((job) => job.id)).toEqual(added.slice(2).map((job) => job.id));
  });

  it('trims from the ledger the jobs BullMQ no longer holds, a short head or a long one, and drops an empty ledger', async () => {
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { priorityByTurn: true },
      concurrency: 0,
    });
    const jobs = await enqueue(moduleRef, 'fair', 'A', many(300));
    const queue = bullQueue(moduleRef);
    const fairness = moduleRef.get(TenantFairness);
    const removeIds = async (from: number, to: number) => {
      for (const job of jobs.slice(from, to)) await (await Job.fromId(queue, job.id!))!.remove();
    };
    // The ledger holds the ids in add order, which BullMQ serves first: removed jobs are a prefix.
    expect((await fairness.getTenant('fair', 'A')).queuedByTurn).toBe(300);
    await removeIds(0, 10); // within the first 32 ids read
    expect((await fairness.getTenant('fair', 'A')).queuedByTurn).toBe(290);
    await removeIds(10, 290); // past 32, and past the next 256
    expect((await fairness.getTenant('fair', 'A')).queuedByTurn).toBe(10);
    await removeIds(290, 300);
    expect((await fairness.getTenant('fair', 'A')).queuedByTurn).toBe(0);
    expect(await queue.getJobCounts('prioritized')).toEqual({ prioritized: 0 });
  });

  it("takes a paused tenant's queued jobs back into the gate, and runs them on resume in their order", async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { priorityByTurn: true, tickMs: 100 },
      concurrency: 1,
      started,
    });
    const fairness = moduleRef.get(TenantFairness);
    // One long job holds the only slot while the others are added and P is paused.
    await enqueue(moduleRef, 'fair', 'Z', [{ ms: 600 }]);
    await waitFor(() => started.length === 1, 'the long job running');
    const p = await enqueue(moduleRef, 'fair', 'P', many(5, { ms: 1 }));
    await enqueue(moduleRef, 'fair', 'Q', many(5, { ms: 1 }));
    await fairness.pause('fair', 'P');
    const queue = bullQueue(moduleRef);
    // Held again (BullMQ's delayed set, by the gate), in its backlog.
    expect(await (await Job.fromId(queue, p[0].id!))!.getState()).toBe('delayed');
    expect((await fairness.getTenant('fair', 'P')).backlog).toBe(5);
    expect(await queue.getJobCounts('prioritized', 'delayed')).toEqual({
      prioritized: 5,
      delayed: 5,
    });
    // A new job of the paused tenant waits in the gate too.
    const late = await enqueue(moduleRef, 'fair', 'P', [{ ms: 1 }]);
    expect((await fairness.getTenant('fair', 'P')).backlog).toBe(6);
    await waitFor(() => started.filter((s) => s.tenantId === 'Q').length === 5, 'Q done');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(started.some((s) => s.tenantId === 'P')).toBe(false);
    await fairness.resume('fair', 'P');
    await waitFor(() => started.filter((s) => s.tenantId === 'P').length === 6, 'P done');
    expect(started.filter((s) => s.tenantId === 'P').map((s) => s.jobId)).toEqual([
      ...p.map((j) => j.id),
      late[0].id,
    ]);
  });

  it('holds a tenant that gets a cap to it from then on, its queued jobs included', async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { priorityByTurn: true, tickMs: 100 },
      concurrency: 6,
      started,
    });
    const fairness = moduleRef.get(TenantFairness);
    const queue = bullQueue(moduleRef);
    await enqueue(moduleRef, 'fair', 'Z', many(6, { ms: 400 }));
    await waitFor(() => started.length === 6, 'the slots busy');
    await enqueue(moduleRef, 'fair', 'C', many(12, { ms: 30 }));
    await fairness.setConcurrency('fair', 'C', 2);
    // Back in the gate, which admits two at once (at their turn levels) and holds ten.
    expect(await queue.getJobCounts('prioritized')).toEqual({ prioritized: 2 });
    expect((await fairness.getTenant('fair', 'C')).backlog).toBe(10);
    await waitFor(() => started.filter((s) => s.tenantId === 'C').length === 12, 'C done', 20_000);
    // Each job runs 30 ms at least: three starts of C within 30 ms would be three at once.
    const starts = started.filter((s) => s.tenantId === 'C').map((s) => s.at);
    for (let i = 2; i < starts.length; i++)
      expect(starts[i] - starts[i - 2]).toBeGreaterThanOrEqual(29);
  });

  it('admits a tenant whose queued jobs a rule took back at the turns they had, not behind every other tenant', async () => {
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { priorityByTurn: true },
      concurrency: 0,
    });
    const fairness = moduleRef.get(TenantFairness);
    const queue = bullQueue(moduleRef);
    await enqueue(moduleRef, 'fair', 'A', many(30));
    const b = await enqueue(moduleRef, 'fair', 'B', many(30));
    // B's 30 jobs alternate with A's; a cap (a pause, a rate limit) takes them back into the gate,
    // which admits B's first at once: at its own turn, next to A's first, not after A's 30.
    await fairness.setConcurrency('fair', 'B', 1);
    const order = (await queue.getJobs(['prioritized'], 0, -1, true)).map((j) => j.id);
    expect(order).toHaveLength(31);
    expect(order.indexOf(b[0].id!)).toBeLessThanOrEqual(2);
    // A paused and resumed: its jobs go back to the gate, then in at their turns, A's first
    // among the first again.
    await fairness.pause('fair', 'A');
    await fairness.resume('fair', 'A');
    const again = (await queue.getJobs(['prioritized'], 0, -1, true)).map((j) => j.id);
    expect(again.indexOf(order[0]!)).toBeLessThanOrEqual(2);
  });

  it("admits a capped tenant's new jobs at once (the add kicks the gate), beside a free tenant's taking their turns", async () => {
    const started: Started[] = [];
    // A tick far away: only the add's own kick can admit the capped tenant's first job soon.
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { tickMs: 60_000 },
      concurrency: 4,
      started,
    });
    const fairness = moduleRef.get(TenantFairness);
    const queue = bullQueue(moduleRef);
    await fairness.setConcurrency('fair', 'K', 1);
    const t0 = Date.now();
    await enqueue(moduleRef, 'fair', 'K', many(3, { ms: 50 }));
    await enqueue(moduleRef, 'fair', 'F', many(2, { ms: 50 }));
    await waitFor(() => started.some((s) => s.tenantId === 'K'), "K's first job", 5_000);
    expect(Date.now() - t0).toBeLessThan(3_000);
    // K's other two wait in the gate for its slot; F's jobs went straight to their turns.
    expect((await fairness.getTenant('fair', 'K')).backlog).toBeGreaterThanOrEqual(1);
    await waitFor(() => started.length === 5, 'all five', 10_000);
    const k = started.filter((s) => s.tenantId === 'K').map((s) => s.at);
    expect(k[1] - k[0]).toBeGreaterThanOrEqual(49);
    expect(k[2] - k[1]).toBeGreaterThanOrEqual(49);
    expect(await queue.getJobCounts('delayed', 'prioritized')).toEqual({
      delayed: 0,
      prioritized: 0,
    });
  });

  it("frees the slot of a job the gate admitted when it ends, after an operator's changePriority to an even priority (held or waiting)", async () => {
    const started: Started[] = [];
    // A tick far away: only the worker's release can free K's slot in time.
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { tickMs: 60_000 },
      concurrency: 1,
      started,
    });
    const fairness = moduleRef.get(TenantFairness);
    const queue = bullQueue(moduleRef);
    await fairness.setConcurrency('fair', 'K', 1);
    // F's job keeps the one worker slot busy, so K's admitted job waits in BullMQ.
    await enqueue(moduleRef, 'fair', 'F', [{ ms: 1_000 }]);
    await waitFor(() => started.length === 1, "F's job running", 5_000);
    const [first, held, last] = await enqueue(moduleRef, 'fair', 'K', many(3, { ms: 20 }));
    await waitFor(
      async () => (await queue.getJobCounts('prioritized')).prioritized === 1,
      "K's first job admitted",
      5_000,
    );
    expect(await (await Job.fromId(queue, held.id))!.getState()).toBe('delayed');
    // Even priorities are the ones a job that skipped the gate takes (it holds no slot).
    await (await Job.fromId(queue, first.id))!.changePriority({ priority: 2 });
    await (await Job.fromId(queue, held.id))!.changePriority({ priority: 4 });
    expect(await (await Job.fromId(queue, first.id))!.getState()).toBe('prioritized');
    await waitFor(() => started.some((s) => s.jobId === last.id), "K's last job", 5_000);
    const k = started.filter((s) => s.tenantId === 'K').map((s) => s.jobId);
    expect(k).toEqual([first.id, held.id, last.id]);
    await waitFor(
      async () => (await fairness.getTenant('fair', 'K')).inFlight === 0,
      "K's slot freed",
      5_000,
    );
    // A job that skipped the gate holds no slot, given `delay: 0` (no delay) too.
    const gate = moduleRef.get(FairGateRegistry).get('fair');
    const [free] = await enqueue(moduleRef, 'fair', 'F', [{ ms: 1 }], { delay: 0 });
    const skipped = await Job.fromId(queue, free.id);
    expect(skipped!.priority % 2).toBe(0);
    expect(gate.holdsNoSlot(skipped!)).toBe(true);
  });

  it('takes the queued jobs back into the gate when the directory gives the tenant a cap', async () => {
    const directory = new InMemoryTenantDirectory([{ id: 'acme', status: 'active' }]);
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { priorityByTurn: true },
      concurrency: 0,
      directory,
    });
    const queue = bullQueue(moduleRef);
    await enqueue(moduleRef, 'fair', 'acme', many(5));
    expect(await queue.getJobCounts('prioritized', 'delayed')).toEqual({
      prioritized: 5,
      delayed: 0,
    });
    directory.upsert({ id: 'acme', maxConcurrency: 1 });
    await moduleRef.get(TenantTiers).refresh('acme');
    // Held by its cap now: back in the gate, which admits one (no worker takes it here).
    const state = await moduleRef.get(TenantFairness).getTenant('fair', 'acme');
    expect([state.backlog, state.queuedByTurn, state.inFlight]).toEqual([4, 0, 1]);
    expect(await queue.getJobCounts('prioritized', 'delayed')).toEqual({
      prioritized: 1,
      delayed: 4,
    });
  });

  it("counts a skipped job's final failures for its tenant's slow lane", async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: {
        priorityByTurn: true,
        tickMs: 100,
        slowLane: { failureThreshold: 3, windowMs: 60_000 },
      },
      concurrency: 2,
      started,
    });
    const fairness = moduleRef.get(TenantFairness);
    await enqueue(moduleRef, 'fair', 'F', many(4, { fail: true }));
    await waitFor(
      async () => (await fairness.getTenant('fair', 'F')).slowLane,
      'F in the slow lane',
      10_000,
    );
    expect((await fairness.getTenant('fair', 'F')).recentFailures).toBeGreaterThanOrEqual(3);
  });

  it("counts a skipped job that BullMQ fails before it runs (stalled too often) for its tenant's slow lane", async () => {
    const prefix = uniquePrefix();
    const options = { priorityByTurn: true, slowLane: { failureThreshold: 3, windowMs: 60_000 } };
    const producer = await bootFairApp({ prefix, fairness: options, concurrency: 0 });
    const redis = openRedis();
    try {
      const jobs = await enqueue(producer, 'fair', 'S', many(3));
      // What BullMQ's stalled check leaves on a job that stalled more than maxStalledCount: the
      // worker that fetches it next fails it without running it, so the runner never opens it.
      const queue = bullQueue(producer);
      for (const job of jobs) {
        await redis.hset(queue.toKey(job.id!), 'defa', 'job stalled more than allowable limit');
      }
      const started: Started[] = [];
      moduleRef = await bootFairApp({ prefix, fairness: options, concurrency: 2, started });
      const fairness = moduleRef.get(TenantFairness);
      await waitFor(
        async () => (await fairness.getTenant('fair', 'S')).slowLane,
        'S in the slow lane',
        10_000,
      );
      expect(started).toHaveLength(0);
      expect((await fairness.getTenant('fair', 'S')).recentFailures).toBe(3);
    } finally {
      await redis.quit();
      await producer.close();
    }
  });
});
