import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  InvalidFairKeyError,
  InvalidPayloadError,
  TenantContext,
  TenantFairness,
  TenantFairnessOptions,
  TenantJob,
  TenantJobOptions,
  TenantProcessor,
  TenantQueue,
  TenantQueueInspector,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
  parseCancelReason,
} from '../../../lib';
import { TenantQueueRedis } from '../../../lib/core/redis/tenant-queue.redis';
import { tenantKeyPart } from '../../../lib/core/context/tenant-key';
import { FairnessStateSource } from '../../../lib/fairness/fairness-state.source';
import { enqueue, many } from '../../support/jobs';
import { testRootImports } from '../../support/test-module';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';
import request from 'supertest';
import { FairnessDemoModule } from '../../../sample-app/fairness/fairness-demo.module';
import { bootSampleHttp } from '../../support/sample-http';

jest.setTimeout(60_000);

const SECRET = 'fair-key-secret-0123456789-0123456789-ab';

interface Data {
  user: string;
  ms?: number;
}

interface Done {
  tenantId: string;
  user: string;
  /** The fair key the job's (verified) envelope carries. */
  fairKey: string | undefined;
  jobId: string;
  at: number;
}

async function boot(fairness: TenantFairnessOptions, done: Done[], concurrency: number) {
  @TenantProcessor('fk', { concurrency: Math.max(1, concurrency) })
  class FairKeyProcessor extends TenantWorkerHost {
    async process(job: TenantJob<Data>) {
      if (job.data.ms) await new Promise((resolve) => setTimeout(resolve, job.data.ms));
      done.push({
        tenantId: job.tenant!.tenantId,
        user: job.data.user,
        fairKey: job.tenant!.fairKey,
        jobId: job.id!,
        at: Date.now(),
      });
    }
  }
  @Module({
    imports: [
      ...testRootImports(uniquePrefix('fk'), { envelope: { secret: SECRET } }),
      TenantQueueModule.registerQueue({
        name: 'fk',
        fairness,
        systemJobs: ['cleanup'],
        defaultJobOptions: { removeOnComplete: true, removeOnFail: { count: 100 } },
      }),
      TenantQueueModule.registerQueue({ name: 'plain-fair', fairness: {} }),
      TenantQueueModule.registerQueue({
        name: 'fk-lanes',
        fairness: {
          fairKey: 'job',
          lanes: { interactive: { share: 0.5 }, bulk: { share: 0.5, jobs: ['export'] } },
        },
      }),
    ],
    providers: concurrency > 0 ? [FairKeyProcessor] : [],
  })
  class FairKeyModule {}
  const moduleRef = await Test.createTestingModule({ imports: [FairKeyModule] }).compile();
  await moduleRef.init();
  return moduleRef;
}

/**
 * The gate's keys of a tenant's keyed backlog (fair-fairkey.lua), built as the scripts build
 * them: per lane its zset of jobs in their keys' turns, and the hash of its keys' tails.
 */
function keyedKeys(queue: TenantQueue<any>, tenantId: string, lanes = ['']) {
  const base = `${queue.definition.bullPrefix}:~fair`;
  const t = tenantKeyPart(tenantId);
  const lane = (l: string) => (l ? `:${l}` : '');
  return lanes.flatMap((l) => [`${base}:kz:${t}${lane(l)}`, `${base}:kt:${t}${lane(l)}`]);
}

/** How many of `names` exist (one key at a time: fine on a Redis Cluster too). */
async function existing(moduleRef: TestingModule, names: string[]): Promise<number> {
  const client = moduleRef.get(TenantQueueRedis).client;
  let found = 0;
  for (const name of names) found += await client.exists(name);
  return found;
}

const queueOf = (moduleRef: TestingModule, name = 'fk') =>
  moduleRef.get(TenantQueueRegistry).getQueue<Data>(name);

/** `count` jobs of one user of `tenantId`, under its fair key when `keyed`. */
const addForUser = (
  moduleRef: TestingModule,
  tenantId: string,
  user: string,
  count: number,
  keyed: boolean,
  ms = 2,
) =>
  enqueue(
    moduleRef,
    'fk',
    tenantId,
    many<Data>(count, { user, ms } as Data),
    keyed ? { fairKey: user } : {},
  );

/** Jain's fairness index of the counts: 1 when all equal, 1/n when one has everything. */
function jain(counts: number[]): number {
  const sum = counts.reduce((a, b) => a + b, 0);
  const squares = counts.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 0 : (sum * sum) / (counts.length * squares);
}

const USERS = Array.from({ length: 20 }, (_, i) => `user-${String(i).padStart(2, '0')}`);
const FLOOD = 2000;
/** Without keys the flood runs first whatever its size: a shorter one shows it as well. */
const FIFO_FLOOD = 600;
const LIGHT = 30;

/**
 * One tenant, 20 users: user-00 floods first (FLOOD jobs), then the 19 others enqueue LIGHT jobs
 * each. The measured window is the one the issue means, while every user has work: from the
 * moment the last user's jobs are enqueued until the first user has none left (its last job
 * completes). Returns Jain's index over the users' completions in that window.
 */
async function floodIndex(
  keyed: boolean,
  flood = FLOOD,
): Promise<{ index: number; counts: number[] }> {
  const done: Done[] = [];
  const moduleRef = await boot(keyed ? { fairKey: 'job' } : {}, done, 4);
  try {
    await addForUser(moduleRef, 'acme', USERS[0], flood, keyed);
    const light = USERS.slice(1);
    const queue = queueOf(moduleRef);
    await moduleRef.get(TenantContext).run('acme', () =>
      queue.addBulk(
        light.flatMap((user) =>
          Array.from({ length: LIGHT }, () => ({
            name: 'work',
            data: { user, ms: 2 },
            opts: keyed ? { fairKey: user } : {},
          })),
        ),
      ),
    );
    const start = Date.now();
    const total = (user: string) => (user === USERS[0] ? flood : LIGHT);
    // Done when some user has finished (keyed: a light user; FIFO: the flooder, then the rest).
    const finishedAt = () =>
      Math.min(
        ...USERS.map((user) => {
          const mine = done.filter((d) => d.user === user);
          return mine.length === total(user) ? mine[mine.length - 1].at : Infinity;
        }),
      );
    await waitFor(() => finishedAt() < Infinity, 'a user to finish', 40_000);
    const end = finishedAt();
    const window = done.filter((d) => d.at >= start && d.at <= end);
    const counts = USERS.map((user) => window.filter((d) => d.user === user).length);
    if (keyed) {
      // The key travelled in the signed envelope (the worker verified it) and is the user's.
      expect(done.every((d) => d.fairKey === d.user)).toBe(true);
    }
    return { index: jain(counts), counts };
  } finally {
    await moduleRef.close();
  }
}

/** Tenant A (weight 2, its jobs over `keys` fair keys) against B (weight 1): A's share. */
async function shareWithKeys(keys: number): Promise<number> {
  const done: Done[] = [];
  const moduleRef = await boot({ fairKey: 'job' }, done, 4);
  try {
    await moduleRef.get(TenantFairness).setWeight('fk', 'A', 2);
    const queue = queueOf(moduleRef);
    await moduleRef.get(TenantContext).run('A', () =>
      queue.addBulk(
        Array.from({ length: 800 }, (_, i) => ({
          name: 'work',
          data: { user: `a-${i % keys}`, ms: 1 },
          opts: { fairKey: `a-${i % keys}` },
        })),
      ),
    );
    await addForUser(moduleRef, 'B', 'b-0', 800, true, 1);
    await waitFor(() => done.length >= 700, '700 jobs', 40_000);
    // Past the jobs admitted before B arrived, while both are backlogged.
    const window = done.slice(100, 700);
    return window.filter((d) => d.tenantId === 'A').length / window.length;
  } finally {
    await moduleRef.close();
  }
}

describe('fair keys: fairness inside a tenant (real Redis)', () => {
  it("gives one tenant's 20 users equal completions while one floods (Jain >= 0.95)", async () => {
    const keyed = await floodIndex(true);
    const fifo = await floodIndex(false, FIFO_FLOOD);
    // Measured here (2 shared cores): keyed ~0.98-0.99; without keys ~0.05 (the flooder alone).
    expect(keyed.index).toBeGreaterThanOrEqual(0.95);
    expect(fifo.index).toBeLessThan(0.3);
    // Every light user got its turns in the keyed window, not only after the flood.
    expect(Math.min(...keyed.counts.slice(1))).toBeGreaterThanOrEqual(LIGHT - 3);
  });

  it("keeps a tenant's share against another tenant its weight, with 1 key or 20", async () => {
    const one = await shareWithKeys(1);
    const twenty = await shareWithKeys(20);
    // Weight 2 against 1: 2/3 each time; keys never enter the tenants' turns.
    expect(Math.abs(one - 2 / 3)).toBeLessThanOrEqual(0.06);
    expect(Math.abs(twenty - 2 / 3)).toBeLessThanOrEqual(0.06);
    expect(Math.abs(one - twenty)).toBeLessThanOrEqual(0.06);
  });

  describe('enqueue checks and readers', () => {
    let moduleRef: TestingModule;
    let queue: TenantQueue<Data>;
    const done: Done[] = [];

    beforeAll(async () => {
      moduleRef = await boot({ fairKey: 'actor' }, done, 0);
      queue = queueOf(moduleRef);
    });
    afterAll(() => moduleRef.close());

    const backlog = async (tenantId: string) =>
      (await moduleRef.get(TenantFairness).getTenant('fk', tenantId)).backlog;
    const inBull = async () =>
      Object.values(await queue.bullQueue.getJobCounts()).reduce((a, b) => a + b, 0);

    it.each<[string, unknown]>([
      ['a number', 42],
      ['empty', ''],
      ['with a space', 'user 1'],
      ['non-ASCII', 'usér'],
      ['129 characters', 'k'.repeat(129)],
      ['an object', { id: 'u1' }],
    ])('refuses a fairKey that is %s, writing nothing', async (_label, fairKey) => {
      const context = moduleRef.get(TenantContext);
      await expect(
        context.run('bad', () =>
          queue.addBulk([
            { name: 'work', data: { user: 'ok' }, opts: { fairKey: 'fine' } },
            { name: 'work', data: { user: 'x' }, opts: { fairKey: fairKey as string } },
          ]),
        ),
      ).rejects.toThrow(InvalidFairKeyError);
      expect(await backlog('bad')).toBe(0);
      expect(await inBull()).toBe(0);
    });

    it('accepts 128 printable characters, and refuses a key without a tenant or fair keys', async () => {
      const context = moduleRef.get(TenantContext);
      await moduleRef.get(TenantFairness).pause('fk', 'edge');
      await context.run('edge', () =>
        queue.add('work', { user: 'k' }, { fairKey: '~'.repeat(128) }),
      );
      expect(await backlog('edge')).toBe(1);
      // No tenant: a fair key orders jobs inside one, so there is nothing to order.
      await expect(queue.add('cleanup', { user: 'x' }, { fairKey: 'u1' })).rejects.toThrow(
        /has a fairKey but no tenant/,
      );
      // A fair queue without fairness.fairKey refuses the option rather than ignoring it.
      const plain = queueOf(moduleRef, 'plain-fair');
      await expect(
        context.run('edge', () => plain.add('work', { user: 'x' }, { fairKey: 'u1' })),
      ).rejects.toThrow(/does not use fair keys/);
      // A payload cannot bring its own envelope (and so its own key).
      await expect(
        context.run('edge', () =>
          queue.add('work', { user: 'x', _tenant: { fairKey: 'forged' } } as unknown as Data),
        ),
      ).rejects.toThrow(InvalidPayloadError);
    });

    it('keeps keys apart that would share a Redis key unescaped (":", "%", "{}")', async () => {
      await moduleRef.get(TenantFairness).pause('fk', 'col');
      const context = moduleRef.get(TenantContext);
      const keys = ['a:b', 'a%3Ab', '{a}:b', 'a', 'a:b:c'];
      await context.run('col', () =>
        queue.addBulk(
          keys.flatMap((fairKey, i) =>
            Array.from({ length: i + 1 }, () => ({
              name: 'work',
              data: { user: fairKey },
              opts: { fairKey },
            })),
          ),
        ),
      );
      expect(await backlog('col')).toBe(15);
      // A fair key is only ever a hash field, never part of a key name (so no ':' or '{' of a
      // key can open a hash tag or meet another key's name): each key its own tail, the jobs
      // in one zset in the tenant's slot.
      const client = moduleRef.get(TenantQueueRedis).client;
      const [zset, tails] = keyedKeys(queue, 'col');
      expect([zset, tails].every((name) => name.indexOf('{', 1) === -1)).toBe(true);
      expect(await client.zcard(zset)).toBe(15);
      const tail = await client.hgetall(tails);
      expect(Object.keys(tail).sort()).toEqual([...keys].sort());
      for (const [i, fairKey] of keys.entries()) expect(Number(tail[fairKey])).toBe(i + 1);
      const listed = await moduleRef.get(FairnessStateSource).gateJobs('fk', 'col', 15);
      const users = listed.map((job) => (job.data as Data).user);
      // First round: one job of each key, in key order; no key lost or merged with another.
      expect(users.slice(0, keys.length).sort()).toEqual([...keys].sort());
      for (const [i, fairKey] of keys.entries()) {
        expect(users.filter((user) => user === fairKey)).toHaveLength(i + 1);
      }
    });

    it("orders a tenant's gated jobs by its keys' turns in backlog, list and explain", async () => {
      const fairness = moduleRef.get(TenantFairness);
      await fairness.pause('fk', 'ord');
      const context = moduleRef.get(TenantContext);
      const run = (actor: string | undefined, opts: TenantJobOptions, user: string) =>
        context.run(
          { tenantId: 'ord', actor: actor ? { type: 'user', id: actor } : { type: 'system' } },
          () => queue.add('work', { user }, opts),
        );
      const ids: Record<string, string[]> = { u1: [], u2: [], none: [] };
      // u1: 3 jobs by its actor id ('actor' mode); u2: 2 by an explicit key; 1 without a key.
      for (let i = 0; i < 3; i++) ids.u1.push((await run('u1', {}, 'u1')).id);
      for (let i = 0; i < 2; i++) ids.u2.push((await run('someone', { fairKey: 'u2' }, 'u2')).id);
      ids.none.push((await run(undefined, {}, 'none')).id);
      expect(await backlog('ord')).toBe(6);

      // Round robin over the keys (u1, u2 and the key-less jobs each start at the first turn;
      // one turn of several keys goes in enqueue order): u1, u2, '' (none), u1, u2, u1.
      const expected = [ids.u1[0], ids.u2[0], ids.none[0], ids.u1[1], ids.u2[1], ids.u1[2]];
      const source = moduleRef.get(FairnessStateSource);
      const listed = await source.gateJobs('fk', 'ord', 10);
      expect(listed.map((job) => job.id)).toEqual(expected);
      const inspector = moduleRef.get(TenantQueueInspector);
      for (const [position, id] of expected.entries()) {
        const explained = await inspector.explain('fk', id);
        expect(explained.state).toBe('gate');
        expect(explained.gate).toMatchObject({ backlogPosition: position, backlogLength: 6 });
      }

      // The worker-less gate admits into BullMQ in that order once resumed.
      await fairness.resume('fk', 'ord');
      await waitFor(async () => (await backlog('ord')) === 0, 'ord admitted');
      const waiting = await queue.bullQueue.getJobs(['wait'], 0, -1, true);
      const admitted = waiting
        .filter((job) => job.data._tenant.tenantId === 'ord')
        .map((job) => job.id);
      expect(admitted).toEqual(expected);
      // Every key's state is gone with its last job: nothing keyed is left for 'ord'.
      expect(await existing(moduleRef, keyedKeys(queue, 'ord'))).toBe(0);
    });

    it('keeps keys inside each lane: turns per lane, lanes in their order', async () => {
      const fairness = moduleRef.get(TenantFairness);
      await fairness.pause('fk-lanes', 'ln');
      const lanes = queueOf(moduleRef, 'fk-lanes');
      const ids = await moduleRef.get(TenantContext).run('ln', () =>
        lanes.addBulk([
          { name: 'export', data: { user: 'u1' }, opts: { fairKey: 'u1' } },
          { name: 'export', data: { user: 'u1' }, opts: { fairKey: 'u1' } },
          { name: 'export', data: { user: 'u2' }, opts: { fairKey: 'u2' } },
          { name: 'click', data: { user: 'u2' }, opts: { fairKey: 'u2' } },
          { name: 'click', data: { user: 'none' } },
          { name: 'click', data: { user: 'u1' }, opts: { fairKey: 'u1', lane: 'bulk' } },
        ]),
      );
      const [e1, e2, e3, c1, c2, b1] = ids.map((job) => job.id);
      expect((await fairness.getTenant('fk-lanes', 'ln')).backlog).toBe(6);
      const listed = await moduleRef.get(FairnessStateSource).gateJobs('fk-lanes', 'ln', 10);
      expect(listed.map((job) => [job.lane, job.id])).toEqual([
        ['interactive', c1],
        ['interactive', c2],
        ['bulk', e1],
        ['bulk', e3],
        ['bulk', e2],
        ['bulk', b1],
      ]);
      const inspector = moduleRef.get(TenantQueueInspector);
      expect((await inspector.explain('fk-lanes', e2)).gate).toMatchObject({
        lane: 'bulk',
        backlogPosition: 2,
        backlogLength: 4,
      });
      expect((await inspector.explain('fk-lanes', c2)).gate).toMatchObject({
        lane: 'interactive',
        backlogPosition: 1,
        backlogLength: 2,
      });
      await fairness.resume('fk-lanes', 'ln');
      await waitFor(
        async () => (await fairness.getTenant('fk-lanes', 'ln')).backlog === 0,
        'ln admitted',
      );
      const left = keyedKeys(lanes, 'ln', ['interactive', 'bulk']);
      expect(await existing(moduleRef, left)).toBe(0);
      const waiting = await lanes.bullQueue.getJobs(['wait', 'prioritized'], 0, -1, true);
      expect(new Set(waiting.map((job) => job.id))).toEqual(new Set([e1, e2, e3, c1, c2, b1]));
    });
  });

  it("sample imports: a colleague's small import runs beside a big one of the same tenant", async () => {
    const app = await bootSampleHttp(FairnessDemoModule);
    try {
      const post = (user: string, rows: number, importId: string) =>
        request(app.getHttpServer())
          .post('/imports')
          .set('x-tenant-id', 'acme')
          .set('x-user-id', user)
          .send({ rows, importId })
          .expect(201);
      await post('alice', 200_000, 'alice-big');
      await post('bob', 2_000, 'bob-small');
      const imports = app.get(TenantQueueRegistry).getQueue('imports').bullQueue;
      await waitFor(async () => {
        const states = await Promise.all(
          ['bob-small~c0', 'bob-small~c1'].map((id) => imports.getJobState(id)),
        );
        return states.every((state) => state === 'completed');
      }, "bob's import to finish");
      const acme = await request(app.getHttpServer()).get('/imports/fairness/acme').expect(200);
      // Without keys bob's chunks would have waited for alice's 200 (acme's cap is 2).
      expect(acme.body.backlog).toBeGreaterThan(150);
    } finally {
      await app.close();
    }
  });

  it('runs a job under the key of its signed envelope, and refuses one whose key was changed', async () => {
    const done: Done[] = [];
    const moduleRef = await boot({ fairKey: 'job' }, done, 1);
    try {
      const queue = queueOf(moduleRef);
      const context = moduleRef.get(TenantContext);
      const kept = await context.run('sig', () =>
        queue.add('work', { user: 'u1' }, { fairKey: 'u1' }),
      );
      // A delayed job goes straight to BullMQ: change its key there, as an attacker could.
      const changed = await context.run('sig', () =>
        queue.add('work', { user: 'u1' }, { fairKey: 'u1', delay: 1500 }),
      );
      const key = `${queue.definition.bullPrefix}:fk:${changed.id}`;
      const client = moduleRef.get(TenantQueueRedis).client;
      const data = JSON.parse((await client.hget(key, 'data'))!);
      expect(data._tenant).toMatchObject({ tenantId: 'sig', fairKey: 'u1' });
      expect(data._tenant.sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
      data._tenant.fairKey = 'someone-else';
      await client.hset(key, 'data', JSON.stringify(data));
      await waitFor(
        async () => (await queue.bullQueue.getJobState(changed.id)) === 'failed',
        'the changed job to be refused',
      );
      const failed = await queue.bullQueue.getJob(changed.id);
      expect(parseCancelReason(failed!.failedReason)).toBe('INVALID_ENVELOPE');
      expect(failed!.failedReason).toMatch(/signature does not match/);
      expect(done.map((d) => [d.jobId, d.fairKey])).toEqual([[kept.id, 'u1']]);
    } finally {
      await moduleRef.close();
    }
  });
});
