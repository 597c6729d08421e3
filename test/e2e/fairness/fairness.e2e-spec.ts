import { Logger } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Job } from 'bullmq';
import {
  addChunked,
  InMemoryTenantDirectory,
  InvalidTenantQueueOptionsError,
  SlowLaneEvent,
  TenantBacklogFullError,
  TenantContext,
  TenantFairness,
  TenantQueueRegistry,
} from '../../../lib';
import { TenantQueueRedis } from '../../../lib/core/redis/tenant-queue.redis';
import { tenantKeyPart } from '../../../lib/core/context/tenant-key';
import { TenantEnvelopeCodec } from '../../../lib/core/envelope/tenant-envelope.codec';
import { FairJobData, Started, bootFairApp } from '../../fixtures/fairness-app';
import { admissionOrder } from '../../support/admissions';
import { enqueue, many } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { sleep, waitFor } from '../../support/wait';

describe('fair gate (one process, real Redis)', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it("runs B's jobs while A's flood is still queued", async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: {},
      concurrency: 4,
      started,
    });
    await enqueue(moduleRef, 'fair', 'A', many(2000, { ms: 2 }));
    await enqueue(moduleRef, 'fair', 'B', many(5, { ms: 2 }));
    await waitFor(() => started.filter((s) => s.tenantId === 'B').length === 5, 'B done');
    const fairness = moduleRef.get(TenantFairness);
    const a = await fairness.getTenant('fair', 'A');
    // By turn (the default), A's jobs wait in BullMQ's prioritized set, not in the gate.
    expect(a.backlog + a.queuedByTurn).toBeGreaterThan(1000);
    expect(started.filter((s) => s.tenantId === 'A').length).toBeLessThan(1000);
  });

  /**
   * A floods at 4 slots (the window, 4 x 4, holds 12 of its jobs waiting in BullMQ's wait list in
   * admission order), then B enqueues `bJobs`: A's jobs started between B's arrival and B's last
   * start. (`moduleRef` stays open for more checks.)
   */
  async function aStartedAheadOfB(bJobs: number): Promise<number> {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { tickMs: 100 },
      concurrency: 4,
      started,
    });
    await enqueue(moduleRef, 'fair', 'A', many(400, { ms: 20 }));
    await waitFor(() => started.length >= 4, 'A running');
    const aBefore = started.filter((s) => s.tenantId === 'A').length;
    await enqueue(moduleRef, 'fair', 'B', many(bJobs, { ms: 20 }));
    const ofB = () => started.filter((s) => s.tenantId === 'B');
    await waitFor(() => ofB().length === bJobs, 'B started');
    const lastB = started.indexOf(ofB()[bJobs - 1]);
    const aAhead = started.slice(0, lastB).filter((s) => s.tenantId === 'A').length - aBefore;
    await waitFor(() => started.filter((s) => s.tenantId === 'A').length >= 40, 'A goes on');
    return aAhead;
  }

  it("starts a light tenant's first jobs ahead of the flood already admitted (by default)", async () => {
    // B is below its share of the slots (4 / 2 tenants): its jobs go to the head of the wait
    // list at their admission, so only the jobs running when they were admitted start before
    // them, not the 12 of A's waiting ahead in admission order.
    expect(await aStartedAheadOfB(2)).toBeLessThanOrEqual(6);
  });

  it("starts all of a small tenant's jobs, beyond its share of the slots, ahead of the flood's queue (by default)", async () => {
    // B's 6 jobs are more than its share of the slots (4 / 2 tenants) but fit in its share of
    // the window (16 / 2): B is small, so all its jobs go beyond the full window and to the
    // head of the wait list, not only its first 2. Ahead of B's last: the 4 running when B
    // came, and at most a few admitted by turns while B's last two waited for room; before
    // this rule, B's jobs 3-6 queued behind A's 12. (A goes on afterwards: the helper waits
    // for 40 of its jobs.)
    expect(await aStartedAheadOfB(6)).toBeLessThanOrEqual(8);
  });

  it('gives a tenant that keeps a few jobs waiting its half against a flood, no more (small and sparse do not add up)', async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: {},
      concurrency: 10,
      started,
    });
    await enqueue(moduleRef, 'fair', 'A', many(5000, { ms: 5 }));
    await waitFor(() => started.length >= 50, 'the flood running');
    // M never has more than 5 jobs waiting to start, so its whole work stays within its share
    // of the window (40 / 2) and each of its jobs goes ahead of the flood's queue; its turns
    // still bound it to half of the starts while both have work.
    let sent = 0;
    const mStarted = () => started.filter((s) => s.tenantId === 'M').length;
    const from = started.length;
    const until = Date.now() + 2000;
    while (Date.now() < until) {
      const waiting = sent - mStarted();
      if (waiting < 5) {
        await enqueue(moduleRef, 'fair', 'M', many(5 - waiting, { ms: 5 }));
        sent += 5 - waiting;
      }
      await sleep(2);
    }
    const window = started.slice(from);
    const share = window.filter((s) => s.tenantId === 'M').length / window.length;
    expect(window.length).toBeGreaterThan(200);
    expect(share).toBeGreaterThan(0.35);
    expect(share).toBeLessThan(0.65);
  });

  it("runs a tenant's delayed jobs once their delay ends, at their turn ahead of a flood queued before them", async () => {
    // A delayed job would hold a slot while it waits: it goes to BullMQ's delayed set directly,
    // and takes its turn in the gate when its delay ends.
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: {},
      concurrency: 2,
      started,
    });
    await enqueue(moduleRef, 'fair', 'A', many(400, { ms: 10 }));
    await waitFor(() => started.length >= 2, 'the flood running');
    const addedAt = Date.now();
    const delayed = await enqueue(moduleRef, 'fair', 'B', many(2, { ms: 1 }), { delay: 500 });
    const bull = moduleRef.get(TenantQueueRegistry).getQueue('fair').bullQueue;
    for (const { id } of delayed) expect(await bull.getJobState(id!)).toBe('delayed');
    const ofB = () => started.filter((s) => s.tenantId === 'B');
    await waitFor(() => ofB().length === 2, "B's delayed jobs started");
    for (const { at } of ofB()) expect(at).toBeGreaterThanOrEqual(addedAt + 500);
    // At their turn: within a few starts of the delay's end, not behind A's ~390 queued jobs.
    const firstB = started.indexOf(ofB()[0]);
    const aAfterDelay = started
      .slice(0, firstB)
      .filter((s) => s.tenantId === 'A' && s.at >= addedAt + 500).length;
    expect(aAfterDelay).toBeLessThanOrEqual(6);
    expect(started.filter((s) => s.tenantId === 'A').length).toBeLessThan(400);
  });

  it('gives weights 3:1 completed shares within 10% while both are backlogged', async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: {},
      concurrency: 4,
      started,
    });
    const fairness = moduleRef.get(TenantFairness);
    await fairness.setWeight('fair', 'A', 3);
    await enqueue(moduleRef, 'fair', 'A', many<FairJobData>(600));
    await enqueue(moduleRef, 'fair', 'B', many<FairJobData>(600));
    await waitFor(() => started.length >= 500, '500 jobs');
    const window = started.slice(100, 500);
    const a = window.filter((s) => s.tenantId === 'A').length;
    const b = window.length - a;
    expect(a / b).toBeGreaterThanOrEqual(2.7);
    expect(a / b).toBeLessThanOrEqual(3.3);
    expect((await fairness.getTenant('fair', 'A')).weight).toBe(3);
  });

  it('takes weight and cap from the TenantDirectory when one is provided', async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: {},
      concurrency: 4,
      started,
      directory: new InMemoryTenantDirectory([
        { id: 'A', weight: 3 },
        { id: 'B' },
        { id: 'C', maxConcurrency: 2 },
      ]),
    });
    await enqueue(moduleRef, 'fair', 'A', many<FairJobData>(400));
    await enqueue(moduleRef, 'fair', 'B', many<FairJobData>(400));
    await enqueue(moduleRef, 'fair', 'C', many<FairJobData>(1));
    const fairness = moduleRef.get(TenantFairness);
    const a = await fairness.getTenant('fair', 'A');
    expect(a).toMatchObject({ weight: 3, concurrency: 0, weightOverride: null });
    expect(await fairness.getTenant('fair', 'C')).toMatchObject({ weight: 1, concurrency: 2 });
    await waitFor(() => started.length >= 300, '300 jobs');
    const window = started.slice(100, 300);
    const share = window.filter((s) => s.tenantId === 'A').length / window.length;
    expect(share).toBeGreaterThan(0.675);
    expect(share).toBeLessThan(0.825);
  });

  // By turn (the default) in start order: a tenant has at most maxConsecutive jobs a turn
  // level, so weight 10 counts as 3. Through the gate (priorityByTurn: false) in admission order
  // (BullMQ's `waiting` events): start order may differ there, since a tenant with nothing else
  // in flight has its admitted job put at the head of the wait list.
  it.each([true, false])(
    'admits at most maxConsecutive jobs of one tenant in a row while another waits (priorityByTurn: %s)',
    async (priorityByTurn) => {
      const started: Started[] = [];
      moduleRef = await bootFairApp({
        prefix: uniquePrefix(),
        fairness: { maxConsecutive: 3, priorityByTurn },
        concurrency: 1,
        started,
      });
      await moduleRef.get(TenantFairness).setWeight('fair', 'A', 10);
      await enqueue(moduleRef, 'fair', 'A', many<FairJobData>(200));
      await enqueue(moduleRef, 'fair', 'B', many<FairJobData>(20));
      await waitFor(() => started.length === 220, 'all jobs');
      const tenantOf = new Map(started.map((s) => [s.jobId, s.tenantId]));
      const order = priorityByTurn
        ? started.map((s) => s.tenantId)
        : (await admissionOrder(moduleRef.get(TenantQueueRegistry).getQueue('fair').bullQueue)).map(
            (id) => tenantOf.get(id),
          );
      expect(order).toHaveLength(220);
      const firstB = order.indexOf('B');
      const lastB = order.lastIndexOf('B');
      let run = 0;
      let longest = 0;
      for (const tenant of order.slice(firstB, lastB + 1)) {
        run = tenant === 'A' ? run + 1 : 0;
        longest = Math.max(longest, run);
      }
      expect(longest).toBe(3);
    },
  );

  it('runs a tenant that wakes up ahead of the flood already admitted, with priorityByTurn and by default', async () => {
    const started: Started[] = [];
    const aheadOfB = async (priorityByTurn: boolean) => {
      started.length = 0;
      moduleRef = await bootFairApp({
        prefix: uniquePrefix(),
        fairness: { priorityByTurn },
        concurrency: 1,
        started,
      });
      await enqueue(moduleRef, 'fair', 'A', many(300, { ms: 2 }));
      await waitFor(() => started.length >= 20, 'the flood running');
      const from = started.length;
      await enqueue(moduleRef, 'fair', 'B', many(3, { ms: 2 }));
      await waitFor(() => started.filter((s) => s.tenantId === 'B').length === 3, 'B done');
      const lastB = started.map((s) => s.tenantId).lastIndexOf('B');
      await moduleRef.close();
      moduleRef = undefined;
      return started.slice(from, lastB).filter((s) => s.tenantId === 'A').length;
    };
    // By turn, about one A job per B job. By default too, at one slot: B has nothing else in
    // flight when each of its jobs is admitted (sparse), so each goes to the head of the wait
    // list instead of behind the window's 16 (before the sparse rule, 14 or more A jobs ran
    // ahead of B's last).
    expect(await aheadOfB(true)).toBeLessThanOrEqual(8);
    expect(await aheadOfB(false)).toBeLessThanOrEqual(8);
  });

  it('enters the slow lane on failures, serves the tenant less, and recovers', async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { tickMs: 100, slowLane: { failureThreshold: 5, windowMs: 3000, recoverAt: 0 } },
      concurrency: 2,
      started,
    });
    const fairness = moduleRef.get(TenantFairness);
    const events: SlowLaneEvent[] = [];
    fairness.onSlowLane((event) => events.push(event));
    await enqueue(moduleRef, 'fair', 'C', many(6, { cancel: true }));
    await waitFor(() => started.length === 6, 'cancelled jobs');
    await waitFor(async () => (await fairness.getTenant('fair', 'C')).inFlight === 0, 'C slots');
    expect((await fairness.getTenant('fair', 'C')).slowLane).toBe(false);

    // One attempt each: the slow lane counts final failures, and five at once are five within
    // the 3 s window however loaded the host is (with retries, their backoffs spread them out).
    await enqueue(moduleRef, 'fair', 'F', many(5, { fail: true }), { attempts: 1 });
    await waitFor(() => events.length === 1, 'slow lane entered');
    expect(events[0]).toMatchObject({ queue: 'fair', tenantId: 'F', state: 'entered' });
    expect((await fairness.getTenant('fair', 'F')).slowLane).toBe(true);

    started.length = 0;
    await fairness.pause('fair', 'F');
    await fairness.pause('fair', 'G');
    const fJobs = await enqueue(moduleRef, 'fair', 'F', many<FairJobData>(100));
    const gJobs = await enqueue(moduleRef, 'fair', 'G', many<FairJobData>(100));
    await fairness.resume('fair', 'G');
    await fairness.resume('fair', 'F');
    await waitFor(() => started.length >= 110, '110 jobs');
    // Its share of the first 110 admissions (BullMQ's `waiting` events): a job of F's with
    // nothing else in flight starts at the head of the wait list, so start order would count
    // F's admitted jobs sooner than G's, queued behind the window.
    const fIds = new Set(fJobs.map((job) => job.id));
    const gIds = new Set(gJobs.map((job) => job.id));
    const admitted = (
      await admissionOrder(moduleRef.get(TenantQueueRegistry).getQueue('fair').bullQueue)
    ).filter((id) => fIds.has(id) || gIds.has(id));
    expect(admitted.length).toBeGreaterThanOrEqual(110);
    const f = admitted.slice(0, 110).filter((id) => fIds.has(id)).length;
    expect(f).toBeLessThan(110 * 0.2);

    await waitFor(() => events.length === 2, 'slow lane left', 10_000);
    expect(events[1]).toMatchObject({ tenantId: 'F', state: 'left' });
    expect((await fairness.getTenant('fair', 'F')).slowLane).toBe(false);
  });

  it('logs an onSlowLane listener that throws or rejects; the others hear the event and the gate goes on', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const logged: string[] = [];
    const log = (message: unknown) => void logged.push(String(message));
    const spies = [
      jest.spyOn(Logger.prototype, 'warn').mockImplementation(log),
      jest.spyOn(Logger.prototype, 'error').mockImplementation(log),
    ];
    try {
      const started: Started[] = [];
      moduleRef = await bootFairApp({
        prefix: uniquePrefix(),
        fairness: { tickMs: 100, slowLane: { failureThreshold: 3, windowMs: 60_000 } },
        concurrency: 2,
        started,
      });
      const fairness = moduleRef.get(TenantFairness);
      const heard: SlowLaneEvent[] = [];
      fairness.onSlowLane(() => {
        throw new Error('pager is down');
      });
      fairness.onSlowLane(async () => {
        await sleep(1);
        throw new Error('chat is down');
      });
      fairness.onSlowLane((event) => heard.push(event));
      await enqueue(moduleRef, 'fair', 'F', many(3, { fail: true }), { attempts: 1 });
      await waitFor(() => heard.length === 1, 'the slow-lane event');
      await waitFor(
        () => ['pager is down', 'chat is down'].every((m) => logged.some((l) => l.includes(m))),
        "the listeners' errors logged",
      );
      await sleep(50); // a turn for an unhandled rejection to surface
      expect(unhandled).toEqual([]);
      // Named as a listener's error, not as a failed release or tick of the gate.
      for (const message of ['pager is down', 'chat is down']) {
        expect(logged.find((l) => l.includes(message))).toMatch(
          /^tenant=F job=- correlation=- onSlowLane listener threw/,
        );
      }
      await enqueue(moduleRef, 'fair', 'G', many(3));
      await waitFor(() => started.filter((s) => s.tenantId === 'G').length === 3, "G's jobs");
    } finally {
      for (const spy of spies) spy.mockRestore();
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('refuses a job beyond maxBacklog and writes nothing of the call', async () => {
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: { maxBacklog: 5 },
      concurrency: 0,
    });
    const fairness = moduleRef.get(TenantFairness);
    await fairness.pause('fair', 'A');
    await enqueue(moduleRef, 'fair', 'A', many<FairJobData>(4));
    await expect(enqueue(moduleRef, 'fair', 'A', many<FairJobData>(2))).rejects.toBeInstanceOf(
      TenantBacklogFullError,
    );
    expect((await fairness.getTenant('fair', 'A')).backlog).toBe(4);
    await enqueue(moduleRef, 'fair', 'A', many<FairJobData>(1));
    await expect(enqueue(moduleRef, 'fair', 'A', many<FairJobData>(1))).rejects.toThrow(
      /maxBacklog 5/,
    );
    expect(await fairness.getTenant('fair', 'A')).toMatchObject({ backlog: 5, paused: true });
  });

  it('pauses and resumes one tenant and caps its in-flight jobs', async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix(),
      fairness: {},
      concurrency: 6,
      started,
    });
    const fairness = moduleRef.get(TenantFairness);
    await fairness.pause('fair', 'A');
    await fairness.setConcurrency('fair', 'B', 2);
    await enqueue(moduleRef, 'fair', 'A', many<FairJobData>(10));
    await enqueue(moduleRef, 'fair', 'B', many(10, { ms: 50 }));
    await sleep(100);
    expect(started.filter((s) => s.tenantId === 'A')).toHaveLength(0);
    const b = await fairness.getTenant('fair', 'B');
    expect(b.inFlight).toBeLessThanOrEqual(2);
    expect(b.concurrency).toBe(2);
    await fairness.resume('fair', 'A');
    await waitFor(() => started.length === 20, 'all jobs');
    await waitFor(async () => (await fairness.getTenant('fair', 'B')).inFlight === 0, 'slots');
  });

  it('splits one huge job into small tenant jobs with stable ids (addChunked)', async () => {
    moduleRef = await bootFairApp({ prefix: uniquePrefix(), fairness: {}, concurrency: 0 });
    const fairness = moduleRef.get(TenantFairness);
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<FairJobData>('fair');
    const rows = Array.from({ length: 2_050 }, (_, i) => i);
    await fairness.pause('fair', 'A');
    const split = () =>
      moduleRef!.get(TenantContext).run('A', () =>
        addChunked(queue, 'import-rows', rows, {
          chunkSize: 500,
          jobIdPrefix: 'import-42',
          data: (chunk) => ({ ms: chunk.size }),
        }),
      );
    const jobs = await split();
    expect(jobs.map((job) => job.id)).toEqual([
      'import-42~c0',
      'import-42~c1',
      'import-42~c2',
      'import-42~c3',
      'import-42~c4',
    ]);
    await split();
    expect((await fairness.getTenant('fair', 'A')).backlog).toBe(5);
  });

  it('ends a job an older version left in its gate as a failed BullMQ job with its data, which a retry runs', async () => {
    const prefix = uniquePrefix();
    const started: Started[] = [];
    moduleRef = await bootFairApp({ prefix, fairness: { tickMs: 100 }, concurrency: 2, started });
    const redis = moduleRef.get(TenantQueueRedis).client;
    const envelope = moduleRef.get(TenantEnvelopeCodec).create({
      tenantId: 'A',
      actor: { type: 'system' },
    });
    // What a version before the written-once gate left in Redis: the whole job in the gate's
    // record, its id in A's backlog, A in turn, and no BullMQ job.
    const base = `{${prefix}:fair}:~fair`;
    const record = JSON.stringify({
      n: 'work',
      d: { _tenant: envelope, n: 7 },
      o: { jobId: 'old-1' },
    });
    await redis.hset(`${base}:jobs`, 'old-1', `${record}\nA`);
    await redis.rpush(`${base}:q:${tenantKeyPart('A')}`, 'old-1');
    await redis.hset(`${base}:bl`, 'A', 1);
    await redis.zadd(`${base}:ready`, 0, 'A');
    const bull = moduleRef.get(TenantQueueRegistry).getQueue('fair').bullQueue;
    await waitFor(async () => (await bull.getJobState('old-1')) === 'failed', 'the old job failed');
    const failed = (await Job.fromId(bull, 'old-1'))!;
    expect(failed.failedReason).toMatch(/older|version/);
    expect(failed.data).toMatchObject({ n: 7, _tenant: { tenantId: 'A' } });
    expect(started.some((s) => s.jobId === 'old-1')).toBe(false);
    await failed.retry();
    await waitFor(() => started.some((s) => s.jobId === 'old-1'), 'the retried job ran');
    await waitFor(async () => (await bull.getJobState('old-1')) === 'completed', 'completed');
    expect(started.filter((s) => s.jobId === 'old-1')).toHaveLength(1);
    const fairness = moduleRef.get(TenantFairness);
    await waitFor(async () => (await fairness.getTenant('fair', 'A')).inFlight === 0, 'slot');
    expect((await fairness.getTenant('fair', 'A')).backlog).toBe(0);
  });

  it('validates fairness options at bootstrap, naming the field', async () => {
    await expect(
      bootFairApp({ prefix: uniquePrefix(), fairness: { maxConsecutive: 0 }, concurrency: 0 }),
    ).rejects.toThrow(
      new InvalidTenantQueueOptionsError(
        'Invalid TenantQueueModule option "registerQueue(fair).fairness.maxConsecutive": must be an integer >= 1.',
      ),
    );
  });
});
