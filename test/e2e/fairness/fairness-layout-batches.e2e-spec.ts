import { TestingModule } from '@nestjs/testing';
import { TenantFairness, TenantQueueRegistry } from '../../../lib';
import { FairGate } from '../../../lib/fairness/fair-gate';
import { FairGateRegistry } from '../../../lib/fairness/fair-gate.registry';
import * as layout from '../../../lib/fairness/fair-layout.check';
import { bootFairApp } from '../../fixtures/fairness-app';
import { enqueue, many } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { openRedis, TestRedisClient } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

/** The hold score's floor (fair-bull.lua): BullMQ's delayed jobs at or above it are the gate's. */
const HOLD_MIN = 9007199254736896;

/**
 * A process whose lanes differ from the ones a queue's held jobs were queued under takes them
 * into its own keys at start (fairness-layout, real processes). That move was one script call
 * over every held id: Redis runs nothing else meanwhile, and a million held jobs would pass its
 * 5 s script limit (BUSY for every client). It now goes about `batch` ids a call, a tenant's ids
 * whole, and the next call goes on where the last stopped.
 */
describe('a change of lanes moves the held jobs in batches of script calls', () => {
  const TENANTS = 25;
  const HELD = 99; // a tenant's jobs past its cap of 1
  let redis: TestRedisClient;
  const apps: TestingModule[] = [];

  beforeAll(() => {
    redis = openRedis();
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    for (const app of apps) await app.close();
    await redis?.quit();
  });

  const FAIRNESS = { priorityByTurn: false, defaultConcurrency: 1, tickMs: 60_000 };

  /** Boots the queue with no lanes, lets `seed` queue its jobs there, and closes it. */
  async function queueUnderNoLanes(prefix: string, seed: (app: TestingModule) => Promise<void>) {
    const before = await bootFairApp({ prefix, fairness: FAIRNESS, concurrency: 0 });
    await seed(before);
    const delayed = before.get(TenantQueueRegistry).getQueue('fair').bullQueue.keys.delayed;
    await before.close();
    return delayed;
  }

  /**
   * Boots the queue again with lanes a and b (no workers): its start moves the backlog, then puts
   * the tenants back in turn a page a call (off the boot's path); resolves once the last page
   * (`wakes`: where each call left off, '' for the last) is done.
   */
  async function bootWithLanes(prefix: string) {
    const wakes: string[] = [];
    const admin = FairGate.prototype.admin;
    jest.spyOn(FairGate.prototype, 'admin').mockImplementation(async function (
      this: FairGate,
      tenantId: string,
      op: string,
      value?: string,
    ) {
      const reply = await admin.call(this, tenantId, op, value);
      if (op === 'wake') wakes.push(String(reply[5]));
      return reply;
    });
    const after = await bootFairApp({
      prefix,
      fairness: { ...FAIRNESS, lanes: { a: { share: 0.5 }, b: { share: 0.5 } }, defaultLane: 'a' },
      concurrency: 0,
    });
    apps.push(after);
    await waitFor(() => wakes[wakes.length - 1] === '', 'the move of the backlog and its turns');
    return { after, wakes };
  }

  it('moves ~2,500 held ids about 1,000 a call, whole tenants, and every tenant keeps its backlog', async () => {
    const prefix = uniquePrefix('laybatch');
    const tenants = Array.from({ length: TENANTS }, (_, i) => `t${i}`);
    const delayed = await queueUnderNoLanes(prefix, async (app) => {
      for (const tenant of tenants) await enqueue(app, 'fair', tenant, many(HELD + 1));
    });
    const held = await redis.zcount(delayed, HOLD_MIN, '+inf');
    expect(held).toBeGreaterThanOrEqual(TENANTS * HELD);

    // The process of the new lanes, its move spied on and run with batches of 1,000.
    const real = layout.checkLayout;
    const changes: (layout.LayoutChange | undefined)[] = [];
    jest.spyOn(layout, 'checkLayout').mockImplementation(async (client, config) => {
      const change = await real(client, config, 1000);
      changes.push(change);
      return change;
    });
    const { after } = await bootWithLanes(prefix);
    // Its first check (at bootstrap) moved them: whole tenants of 99-100 held ids a call, a call
    // stopping once it has moved 1,000 or more (so under 1,100), then the rest.
    const moved = changes.find((change) => change !== undefined);
    const perCall = moved?.movedPerCall ?? [];
    expect(perCall).toHaveLength(3);
    for (const n of perCall.slice(0, -1)) expect(n).toBeGreaterThanOrEqual(1000);
    for (const n of perCall) expect(n).toBeLessThan(1100);
    expect(perCall.reduce((sum, n) => sum + n, 0)).toBe(held);
    expect(moved?.warning).toContain(`the ${held} job(s) queued there`);
    // Nothing is left in the old keys nor in the record of an unfinished move.
    const { base } = after.get(FairGateRegistry).get('fair').config;
    expect(await redis.exists(`${base}:layout:from`)).toBe(0);
    // Held still, but for a tenant's first job this gate admitted (its slot was free).
    const heldNow = await redis.zcount(delayed, HOLD_MIN, '+inf');
    expect(heldNow).toBeGreaterThanOrEqual(held - TENANTS);
    const fair = after.get(TenantFairness);
    const backlogs = await Promise.all(
      tenants.map(async (tenant) => (await fair.getTenant('fair', tenant)).backlog),
    );
    expect(backlogs.reduce((sum, n) => sum + n, 0)).toBe(heldNow);
    for (const n of backlogs) expect(n).toBeGreaterThanOrEqual(HELD);
  });
  it('then puts every tenant with a backlog back in turn, a page of about 1,000 tenants a call', async () => {
    const prefix = uniquePrefix('laywake');
    await queueUnderNoLanes(prefix, async (app) => {
      // 100 adds at a time: 2,500 at once passed enqueueTimeoutMs on a loaded Cluster run.
      for (let from = 0; from < 2500; from += 100) {
        await Promise.all(
          Array.from({ length: 100 }, (_, i) => enqueue(app, 'fair', `w${from + i}`, [{}, {}])),
        );
      }
    });
    const { after, wakes } = await bootWithLanes(prefix);
    // More than one page (HSCAN's COUNT is a hint: about 1,000 a page), the last ending it.
    expect(wakes.length).toBeGreaterThanOrEqual(2);
    expect(wakes[wakes.length - 1]).toBe('');
    // Every tenant with a backlog in lane a and a free slot (none of its jobs admitted: cap 1)
    // is in its turn: none waits for a release or a tick.
    const { base } = after.get(FairGateRegistry).get('fair').config;
    const backlog = await redis.hkeys(`${base}:bl:a`);
    const inFlight = await redis.hgetall(`${base}:inf`);
    const free = backlog.filter((t) => !(Number(inFlight[t] ?? 0) > 0));
    expect(free.length).toBeGreaterThan(1000);
    const inTurn = new Set(await redis.zrange(`${base}:ready:a`, '0', '-1'));
    expect(free.filter((t) => !inTurn.has(t))).toEqual([]);
  });
});
