import { TestingModule } from '@nestjs/testing';
import {
  InvalidJobIdError,
  TenantContext,
  TenantFairness,
  TenantQueueInspector,
  TenantQueueRegistry,
  UnknownTenantQueueError,
} from '../../../lib';
import { FairJobData, Started, bootFairApp } from '../../fixtures/fairness-app';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

/**
 * `TenantQueueInspector.explain` against a real gate: a window of 3 and one worker slot, so
 * what each job waits for is set by the test (a cap, a rate limit, a pause, a deep backlog).
 */
describe('TenantQueueInspector.explain (real Redis)', () => {
  let moduleRef: TestingModule;
  let inspector: TenantQueueInspector;
  const started: Started[] = [];

  async function enqueue(tenantId: string, jobs: FairJobData[], delay?: number, attempts?: number) {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<FairJobData>('fair');
    const context = moduleRef.get(TenantContext);
    return context.run(tenantId, () =>
      queue.addBulk(
        jobs.map((data) => ({
          name: 'work',
          data,
          opts: { ...(delay ? { delay } : {}), ...(attempts ? { attempts } : {}) },
        })),
      ),
    );
  }

  beforeAll(async () => {
    moduleRef = await bootFairApp({
      prefix: uniquePrefix('explain'),
      fairness: { window: 3, priorityByTurn: false, slowLane: { failureThreshold: 2 } },
      concurrency: 1,
      started,
    });
    inspector = moduleRef.get(TenantQueueInspector);
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  it('names the cap, the rate limit, the pause, the backlog and the turn of each waiting job', async () => {
    const fairness = moduleRef.get(TenantFairness);
    await fairness.setConcurrency('fair', 'capped', 1);
    await fairness.setRateLimit('fair', 'limited', { max: 1, per: 60_000 });
    await fairness.pause('fair', 'paused');

    const [c1, c2] = await enqueue('capped', [{ ms: 4000 }, { ms: 10 }]);
    await waitFor(
      async () => (await inspector.explain('fair', c1.id)).state === 'active',
      'c1 running',
    );
    const [r1, r2] = await enqueue('limited', [{ ms: 10 }, { ms: 10 }]);
    const [p1] = await enqueue('paused', [{ ms: 10 }]);
    const deep = await enqueue(
      'deep',
      Array.from({ length: 30 }, () => ({ ms: 10 })),
    );
    const other = await enqueue(
      'other',
      Array.from({ length: 5 }, () => ({ ms: 10 })),
    );

    const active = await inspector.explain('fair', c1.id);
    expect(active).toMatchObject({ queue: 'fair', state: 'active', tenantId: 'capped', holds: [] });
    expect(active.workers).toBe(1);

    const capped = await inspector.explain('fair', c2.id);
    expect(capped).toMatchObject({ state: 'gate', tenantId: 'capped' });
    expect(capped.holds[0]).toBe('concurrency-cap');
    expect(capped.gate).toMatchObject({
      backlogPosition: 0,
      backlogLength: 1,
      turnPosition: null,
      concurrency: 1,
      inFlight: 1,
      paused: false,
    });
    expect(capped.summary).toContain('concurrency cap of 1');

    // r1 went into BullMQ (one worker slot, busy with c1); r2 waits for the rate limit.
    const admitted = await inspector.explain('fair', r1.id);
    expect(admitted).toMatchObject({
      state: 'waiting',
      tenantId: 'limited',
      holds: ['workers-busy'],
    });
    const limited = await inspector.explain('fair', r2.id);
    expect(limited.state).toBe('gate');
    expect(limited.holds[0]).toBe('rate-limit');
    const until = limited.gate!.rateLimitedUntil!;
    expect(until).toBeGreaterThan(Date.now() + 50_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 61_000);
    expect(limited.summary).toContain(new Date(until).toISOString());

    const paused = await inspector.explain('fair', p1.id);
    expect(paused).toMatchObject({ state: 'gate', tenantId: 'paused' });
    expect(paused.holds[0]).toBe('paused');
    expect(paused.gate).toMatchObject({ paused: true, turnPosition: null, backlogPosition: 0 });

    // The window (3) holds c1, r1 and deep's first job: the rest of deep waits in its backlog.
    const inBull = await inspector.explain('fair', deep[0].id);
    expect(inBull.state).toBe('waiting');
    const twentieth = await inspector.explain('fair', deep[19].id);
    expect(twentieth).toMatchObject({ state: 'gate', tenantId: 'deep' });
    expect(twentieth.gate).toMatchObject({
      backlogPosition: 18,
      backlogLength: 29,
      tenantsInTurn: 2,
      window: 3,
      admitted: 3,
    });
    expect(twentieth.holds).toContain('window-full');
    expect(twentieth.holds).toContain('backlog');
    expect(twentieth.summary).toContain("18 of deep's jobs ahead of it");

    // deep and other are both in turn: one is first, the other second and held by its turn.
    const next = await inspector.explain('fair', other.at(-1)!.id);
    const turns = [twentieth.gate!.turnPosition, next.gate!.turnPosition].sort();
    expect(turns).toEqual([0, 1]);
    const second = twentieth.gate!.turnPosition === 1 ? twentieth : next;
    expect(second.holds).toContain('turn');
    expect(second.summary).toContain('2nd of 2 in the turn order');
  });

  it('names the slow lane of a tenant whose jobs kept failing', async () => {
    const fairness = moduleRef.get(TenantFairness);
    await enqueue('flaky', [{ fail: true }, { fail: true }], undefined, 1);
    await waitFor(
      async () => (await fairness.getTenant('fair', 'flaky')).slowLane,
      'flaky in the slow lane',
      20_000,
    );
    // Fill the window (3) so flaky's next jobs wait in the gate.
    await enqueue('busy', [{ ms: 1500 }, { ms: 1500 }, { ms: 1500 }]);
    const jobs = await enqueue('flaky', [{ ms: 10 }, { ms: 10 }, { ms: 10 }]);
    const answer = await inspector.explain('fair', jobs[2].id);
    expect(answer.state).toBe('gate');
    expect(answer.gate!.slowLane).toBe(true);
    expect(answer.holds).toContain('slow-lane');
  });

  it('answers delayed, unknown, a bad id and an unknown queue', async () => {
    const [delayed] = await enqueue('later', [{ ms: 10 }], 60_000);
    const answer = await inspector.explain('fair', delayed.id);
    expect(answer).toMatchObject({ state: 'delayed', tenantId: 'later', holds: ['delay'] });
    expect(answer.delayedUntil).toBeGreaterThan(Date.now() + 55_000);

    const unknown = await inspector.explain('fair', 'no-such-job');
    expect(unknown).toMatchObject({ state: 'unknown', tenantId: null, holds: [], gate: null });
    expect(unknown.summary).toContain('no-such-job');

    await expect(inspector.explain('nope', 'x')).rejects.toThrow(UnknownTenantQueueError);
    await expect(inspector.explain('fair', '')).rejects.toThrow(InvalidJobIdError);
  });
});

describe('TenantQueueInspector.explain on a queue with lanes (real Redis)', () => {
  let moduleRef: TestingModule;

  afterAll(async () => {
    await moduleRef?.close();
  });

  it('names the lane and its share once the lane used it and the window is full', async () => {
    moduleRef = await bootFairApp({
      prefix: uniquePrefix('explain-lanes'),
      fairness: {
        window: 2,
        lanes: { interactive: { share: 0.5 }, bulk: { share: 0.5 } },
        defaultLane: 'bulk',
      },
      concurrency: 1,
    });
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<FairJobData>('fair');
    const jobs = await moduleRef
      .get(TenantContext)
      .run('acme', () =>
        queue.addBulk(Array.from({ length: 4 }, () => ({ name: 'work', data: { ms: 1500 } }))),
      );
    const inspector = moduleRef.get(TenantQueueInspector);
    const last = await inspector.explain('fair', jobs[3].id);
    expect(last).toMatchObject({ state: 'gate', tenantId: 'acme' });
    expect(last.gate).toMatchObject({ lane: 'bulk', backlogPosition: 1, backlogLength: 2 });
    expect(last.holds.slice(0, 2)).toEqual(['lane-share', 'window-full']);
    expect(last.summary).toContain('lane "bulk"');
  });
});
