import { TestingModule } from '@nestjs/testing';
import { TenantFairness, TenantQueueInspector, TenantQueueRegistry } from '../../../lib';
import { FairGateRegistry } from '../../../lib/fairness/fair-gate.registry';
import { gateKeys } from '../../../lib/fairness/fair-gate.script';
import { bootFairApp } from '../../fixtures/fairness-app';
import { enqueue, many } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { openRedis, TestRedisClient } from '../../support/test-redis';

/**
 * A rule that arrives for a tenant (pause, cap, rate limit, floor) takes the jobs it queued in
 * BullMQ by turn back into the gate. That recall was one script call over all of them: pausing a
 * tenant with 100,000 jobs queued ran past Redis' 5 s script limit, and every client of that
 * Redis got BUSY (10,000 jobs: one call of 0.77 s). It now takes 1,000 a call, the newest first,
 * the rest call by call before `pause()` returns, or at the tick when its caller is gone.
 */
describe('a recall of queued turns goes 1,000 jobs a script call', () => {
  const BIG = 2500;
  let moduleRef: TestingModule | undefined;
  let redis: TestRedisClient;

  beforeAll(() => {
    redis = openRedis();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await moduleRef?.close();
    moduleRef = undefined;
  });
  afterAll(async () => {
    await redis?.quit();
  });

  async function boot() {
    moduleRef = await bootFairApp({
      prefix: uniquePrefix('recall'),
      fairness: { priorityByTurn: true, tickMs: 60_000 },
      concurrency: 0,
    });
    const app = moduleRef;
    const big = (await enqueue(app, 'fair', 'B', many(BIG))).map((job) => job.id!);
    await enqueue(app, 'fair', 'O', many(3));
    const bull = app.get(TenantQueueRegistry).getQueue('fair').bullQueue;
    const prioritizedKey = `${bull.keys.prioritized}`;
    /** How many of B's jobs BullMQ still holds by turn. */
    const queuedByTurn = async () =>
      (await redis.zmscore(prioritizedKey, ...big)).filter((score) => score !== null).length;
    expect(await queuedByTurn()).toBe(BIG);
    const gate = app.get(FairGateRegistry).get('fair');
    return { app, big, gate, queuedByTurn };
  }

  /** Every job of B in the gate, in the order it was added. */
  async function expectAllInTheGateInOrder(app: TestingModule, big: string[]) {
    const fairness = app.get(TenantFairness);
    const state = await fairness.getTenant('fair', 'B');
    expect([state.backlog, state.queuedByTurn, state.paused]).toEqual([BIG, 0, true]);
    const inspector = app.get(TenantQueueInspector);
    for (const at of [0, 999, 1000, 1499, 1500, BIG - 1]) {
      const why = await inspector.explain('fair', big[at]);
      expect([why.state, why.gate?.backlogPosition]).toEqual(['gate', at]);
    }
    // O's jobs keep their turns in BullMQ.
    const bull = app.get(TenantQueueRegistry).getQueue('fair').bullQueue;
    expect(await bull.getJobCounts('prioritized')).toEqual({ prioritized: 3 });
  }

  it("pause(): B's 2,500 queued jobs come back 1,000 a call, all in the gate in their order when it returns", async () => {
    const { app, big, gate, queuedByTurn } = await boot();
    const commands = (gate as unknown as { redis: { tqFairAdmin: (...a: unknown[]) => unknown } })
      .redis;
    const original = commands.tqFairAdmin.bind(commands);
    const recalledPerCall: number[] = [];
    let left = BIG;
    jest.spyOn(commands, 'tqFairAdmin').mockImplementation(async (...args: unknown[]) => {
      const reply = await original(...args);
      const now = await queuedByTurn();
      recalledPerCall.push(left - now);
      left = now;
      return reply;
    });
    await app.get(TenantFairness).pause('fair', 'B');
    expect(recalledPerCall).toEqual([1000, 1000, 500]);
    await expectAllInTheGateInOrder(app, big);
  });

  it('a recall its caller left unfinished goes on at the tick, 1,000 a tick', async () => {
    const { app, big, gate, queuedByTurn } = await boot();
    const { base, script } = gate.config;
    // One call of the pause, as a process that died after it would leave it.
    const commands = (gate as unknown as { redis: { tqFairAdmin: (...a: unknown[]) => any } })
      .redis;
    const reply = await commands.tqFairAdmin(gateKeys(base), script, 200, 'B', 'pause', '');
    expect(reply[4]).toBe(1);
    expect(await queuedByTurn()).toBe(BIG - 1000);
    await gate.tick();
    expect(await queuedByTurn()).toBe(BIG - 2000);
    await gate.tick();
    expect(await queuedByTurn()).toBe(0);
    await expectAllInTheGateInOrder(app, big);
  });
});
