import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Queue } from 'bullmq';
import {
  InvalidJobOptionsError,
  InvalidPayloadError,
  InvalidTenantIdError,
  JobIdTakenError,
  TenantFairness,
  TenantQueue,
  TenantQueueModule,
  withRunOptions,
} from '../../../lib';
import { bootProducerApp, ProducerApp } from '../../fixtures/producer-app';
import { uniquePrefix } from '../../support/redis-url';
import { openRedis, testConnection, TestRedisClient } from '../../support/test-redis';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

const KINDS = ['plain', 'fair', 'pooled'] as const;

let redis: TestRedisClient;
let prefix: string;
let p: ProducerApp;

/**
 * Every job id held anywhere by this app's queues: BullMQ's job hashes and the fair gate's job
 * index. Only grows as jobs move on (admission, completion), so "nothing written" is "no change".
 */
async function snapshot(): Promise<string[]> {
  const ids: string[] = [];
  for (const queue of ['plain', 'fair', 'pooled', 'pooled-vip']) {
    const base = `{${prefix}:${queue}}`;
    for (const key of await redis.keys(`${base}:${queue}:*`)) {
      if ((await redis.type(key)) === 'hash' && (await redis.hexists(key, 'data'))) ids.push(key);
    }
    // A job waiting in the gate counts as its BullMQ key, so its admission between two
    // snapshots is no change.
    for (const id of await redis.hkeys(`${base}:~fair:jobs`)) ids.push(`${base}:${queue}:${id}`);
  }
  return [...new Set(ids)].sort();
}

async function refusedCleanly(
  call: () => Promise<unknown>,
  error: new (...args: any[]) => Error,
): Promise<Error> {
  const before = await snapshot();
  const thrown = await call().then(
    () => undefined,
    (e: Error) => e,
  );
  expect(thrown).toBeInstanceOf(error);
  expect(await snapshot()).toEqual(before);
  return thrown!;
}

const as = <T>(tenantId: string, fn: () => Promise<T>) => p.tenant.run(tenantId, fn);

beforeAll(async () => {
  redis = openRedis();
  prefix = uniquePrefix('prod');
  p = await bootProducerApp(prefix, { tenantIdPattern: /^[^\s]{1,100}$/u });
});

afterAll(async () => {
  await p.close();
  await redis.quit();
});

describe('options BullMQ would refuse are refused at enqueue, on every queue kind', () => {
  const bad: [string, object][] = [
    ['jobId "1001"', { jobId: '1001' }],
    ['jobId "a:1"', { jobId: 'a:1' }],
    ['priority 1.5', { priority: 1.5 }],
    ['priority 3e6', { priority: 3e6 }],
    ['delay NaN', { delay: NaN }],
    ['delay -5', { delay: -5 }],
    ['deduplication {}', { deduplication: {} }],
    ['removeOnComplete "x"', { removeOnComplete: 'x' }],
    ['lifo with priority', { lifo: true, priority: 3 }],
    ['jobId ""', { jobId: '' }],
    // `{"n":1}` is 7 bytes; stored with its `_tenant` envelope it is well over 40.
    ['a sizeLimit only the envelope crosses', { sizeLimit: 40 }],
  ];

  for (const kind of KINDS) {
    it.each(bad)(
      `${kind}: refuses %s with a typed error naming it, nothing written`,
      async (_l, opts) => {
        const queue = p.queue(kind);
        const error = (await refusedCleanly(
          () => as('acme', () => queue.add('x', { n: 1 }, opts as any)),
          InvalidJobOptionsError,
        )) as InvalidJobOptionsError;
        expect(Object.keys(opts)).toContain(error.option.split('.')[0]);
        expect(error.message).toContain('nothing was enqueued');
        await refusedCleanly(
          () =>
            as('acme', () =>
              queue.addBulk([
                { name: 'ok', data: { n: 1 } },
                { name: 'x', data: { n: 2 }, opts: opts as any },
              ]),
            ),
          InvalidJobOptionsError,
        );
      },
    );
  }

  it('fair: sixteen refused adds leave the gate serving every tenant', async () => {
    const queue = p.queue('fair');
    for (let i = 0; i < 16; i++) {
      await expect(
        as('acme', () => queue.add('x', { i }, { jobId: String(1000 + i) })),
      ).rejects.toBeInstanceOf(InvalidJobOptionsError);
    }
    const { id } = await as('globex', () => queue.add('x', { ok: true }));
    await waitFor(() => p.runs.some((run) => run.jobId === id), 'globex job to run');
  });

  it('refuses bad defaultJobOptions of a queue at boot', async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('bad')),
        TenantQueueModule.registerQueue({ name: 'q', defaultJobOptions: { priority: 1.5 } }),
      ],
    })
    class BadDefaults {}
    await expect(Test.createTestingModule({ imports: [BadDefaults] }).compile()).rejects.toThrow(
      /registerQueue\([\w-]+\)\.defaultJobOptions\.priority/,
    );
  });
});

describe("differential: our verdict on BullMQ's own rules == plain Queue.add's (real Redis)", () => {
  it('agrees on 300 generated option sets', async () => {
    const { jobOptionsProblem } = await import('../../../lib/core/queues/job-options.check');
    const bull = new Queue('diff', { connection: testConnection(), prefix: `{${prefix}:diff}` });
    let seed = 1234;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(values: T[]) => values[Math.floor(rand() * values.length)];
    const values: Record<string, unknown[]> = {
      jobId: ['ok', '1001', '-3', 'a:1', 'a:b:c', '0', '0:x', '', 7],
      priority: [0, 1, 5, 1.5, 3e6, 2097151, 2097152, -1, NaN, '3'],
      delay: [0, 10, -5, NaN, Infinity, '100'],
      attempts: [1, 3, NaN, -1],
      deduplication: ['unique', {}, { id: '' }],
      backoff: [100, { type: 'fixed', delay: 10, jitter: 0.2 }, { type: 'fixed', jitter: 2 }],
      removeOnComplete: [true, 10, { count: 5 }, 'x', Infinity],
      timestamp: [Date.now(), NaN],
      sizeLimit: [1, 1_000_000],
      debounce: [{ id: 'x' }],
    };
    let agreed = 0;
    for (let i = 0; i < 300; i++) {
      const opts: Record<string, unknown> = {};
      for (const [key, options] of Object.entries(values)) {
        if (rand() < 0.25) opts[key] = pick(options);
      }
      // A duplicate id or a deduplication hit returns before BullMQ stores (and checks)
      // anything: keep the ids BullMQ takes unique.
      if (opts.jobId === 'ok' || opts.jobId === 'a:b:c') opts.jobId = `${opts.jobId}${i}`;
      if (opts.deduplication === 'unique') opts.deduplication = { id: `d-${i}` };
      // bullmq 5 takes `debounce` (an alias of deduplication; 6 refuses it): keep its ids unique too.
      if (opts.debounce) opts.debounce = { id: `b-${i}` };
      const data = { n: i };
      const ours = jobOptionsProblem(opts, JSON.stringify(data), true);
      const theirs = await bull.add('d', data, opts as any).then(
        () => undefined,
        (error: Error) => error.message,
      );
      // An empty jobId makes BullMQ pick its own id: accepted by BullMQ, refused by us (a
      // stricter rule), so `onlyBullmq` must accept it.
      expect({ opts, refused: ours !== undefined }).toEqual({
        opts,
        refused: theirs !== undefined,
      });
      agreed++;
    }
    expect(agreed).toBe(300);
    await bull.obliterate({ force: true });
    await bull.close();
  });
});

describe('addBulk is all or nothing', () => {
  it('plain: a job BullMQ refuses in its script (NaN) no longer leaves the jobs before it', async () => {
    await refusedCleanly(
      () =>
        as('acme', () =>
          p.queue('plain').addBulk([
            { name: 'ok', data: { n: 1 } },
            { name: 'bad', data: { n: 2 }, opts: { attempts: NaN } },
          ]),
        ),
      InvalidJobOptionsError,
    );
  });

  it('plain: a missing parent in a bulk is refused before any job is written', async () => {
    const parent = { id: 'no-such-parent', queue: `{${prefix}:plain}:plain` };
    await refusedCleanly(
      () =>
        as('acme', () =>
          p.queue('plain').addBulk([
            { name: 'ok', data: { n: 1 } },
            { name: 'child', data: { n: 2 }, opts: { parent } },
          ]),
        ),
      InvalidJobOptionsError,
    );
    await refusedCleanly(
      () => as('acme', () => p.queue('plain').add('child', { n: 2 }, { parent })),
      InvalidJobOptionsError,
    );
  });

  it('pooled: a bad job in a bulk writes nothing to any pool', async () => {
    for (const tenantId of ['vip', 'acme']) {
      await refusedCleanly(
        () =>
          as(tenantId, () =>
            p.queue('pooled').addBulk([
              { name: 'x', data: { n: 1 } },
              { name: 'x', data: { n: 2 }, opts: { jobId: `sticky-${tenantId}` } },
              { name: 'x', data: { n: 3 }, opts: { priority: 1.5 } },
            ]),
          ),
        InvalidJobOptionsError,
      );
    }
  });
});

describe('silent losses refused at enqueue', () => {
  it('fair: opts.parent is refused, naming why', async () => {
    const error = (await refusedCleanly(
      () =>
        as('acme', () =>
          p.queue('fair').add('x', {}, { parent: { id: 'p1', queue: `{${prefix}:fair}:fair` } }),
        ),
      InvalidJobOptionsError,
    )) as InvalidJobOptionsError;
    expect(error.option).toBe('parent');
    expect(error.message).toMatch(/not supported on a fair queue/);
  });

  it("plain: a parent of another tenant is refused, a bulk whole; one's own parent is linked", async () => {
    const plain = p.queue('plain');
    // Delayed, so it waits for its children rather than completing under the test.
    const parent = await as('acme', () => plain.add('parent', {}, { delay: 60_000 }));
    const link = { parent: { id: parent.id, queue: `{${prefix}:plain}:plain` } };
    const error = (await refusedCleanly(
      () => as('globex', () => plain.add('child', { n: 1 }, link)),
      InvalidJobOptionsError,
    )) as InvalidJobOptionsError;
    expect(error.option).toBe('parent');
    expect(error.message).toMatch(/of another tenant/);
    await refusedCleanly(
      () =>
        as('globex', () =>
          plain.addBulk([
            { name: 'child', data: { n: 2 } },
            { name: 'child', data: { n: 3 }, opts: link },
          ]),
        ),
      InvalidJobOptionsError,
    );
    const parentJob = (await plain.bullQueue.getJob(parent.id))!;
    expect(await parentJob.getDependenciesCount()).toEqual(
      expect.objectContaining({ processed: 0, unprocessed: 0 }),
    );
    // acme's own child is linked, runs in acme and reaches acme's parent.
    const child = await as('acme', () => plain.add('child', { n: 4 }, link));
    await waitFor(
      async () => (await parentJob.getDependenciesCount()).processed === 1,
      "acme's child to complete under its parent",
    );
    expect(p.runs.find((run) => run.jobId === child.id)?.tenantId).toBe('acme');
  });

  for (const kind of KINDS) {
    it(`${kind}: refuses invalid "_run", a toJSON payload and a BigInt; takes withRunOptions`, async () => {
      const queue = p.queue(kind) as TenantQueue<any>;
      await refusedCleanly(
        () => as('acme', () => queue.add('x', { _run: { timeoutMs: -1 } })),
        InvalidPayloadError,
      );
      await refusedCleanly(
        () => as('acme', () => queue.add('x', { _run: 'x' })),
        InvalidPayloadError,
      );
      await refusedCleanly(
        () => as('acme', () => queue.add('x', { a: 1, toJSON: () => ({ _tenant: 'evil' }) })),
        InvalidPayloadError,
      );
      await refusedCleanly(
        () => as('acme', () => queue.add('x', { big: BigInt(1) })),
        InvalidPayloadError,
      );
      const { id } = await as('acme', () =>
        queue.add('x', withRunOptions({ kind }, { timeoutMs: 5000 })),
      );
      await waitFor(() => p.runs.some((run) => run.jobId === id), `${kind} job with _run to run`);
      expect(p.runs.find((run) => run.jobId === id)?.tenantId).toBe('acme');
    });
  }
});

describe('caller-chosen job ids: one tenant per id', () => {
  for (const kind of KINDS) {
    it(`${kind}: another tenant reusing an id is refused; the owner's repeat stays harmless`, async () => {
      const queue = p.queue(kind);
      const jobId = `inv-${kind}`;
      const first = await as('acme', () => queue.add('x', { who: 'acme' }, { jobId }));
      const error = (await refusedCleanly(
        () => as('globex', () => queue.add('x', { who: 'globex' }, { jobId })),
        JobIdTakenError,
      )) as JobIdTakenError;
      expect(error.jobId).toBe(jobId);
      expect(error.message).not.toContain('acme');
      await refusedCleanly(
        () =>
          as('globex', () =>
            queue.addBulk([
              { name: 'x', data: {}, opts: { jobId: `${jobId}-free` } },
              { name: 'x', data: {}, opts: { jobId } },
            ]),
          ),
        JobIdTakenError,
      );
      await expect(queue.addForTenant('globex', 'x', {}, { jobId })).rejects.toBeInstanceOf(
        JobIdTakenError,
      );
      const again = await as('acme', () => queue.add('x', { who: 'acme' }, { jobId }));
      expect(again.id).toBe(first.id);
      await waitFor(() => p.runs.some((run) => run.jobId === jobId), `${kind} id job to run`);
      const runs = p.runs.filter((run) => run.jobId === jobId);
      expect(runs.map((run) => run.tenantId)).toEqual(['acme']);
    });
  }

  it('plain: a job written before the ledger (no owner key) still keeps its id', async () => {
    const queue = p.queue('plain');
    await as('acme', () => queue.add('x', {}, { jobId: 'legacy-1' }));
    await redis.del(`{${prefix}:plain}:~id:legacy-1`);
    await expect(
      as('globex', () => queue.add('x', {}, { jobId: 'legacy-1' })),
    ).rejects.toBeInstanceOf(JobIdTakenError);
  });
  it('fair: a job waiting in the gate (no owner key) still keeps its id', async () => {
    const fairness = p.app.get(TenantFairness);
    await fairness.pause('fair', 'waiting-co');
    await as('waiting-co', () => p.queue('fair').add('x', {}, { jobId: 'gated-1' }));
    // Waiting in the gate is waiting in BullMQ's delayed set: the id's owner is read from there.
    expect(await p.queue('fair').bullQueue.getJobState('gated-1')).toBe('delayed');
    await redis.del(`{${prefix}:fair}:~id:gated-1`);
    await expect(
      as('globex', () => p.queue('fair').add('x', {}, { jobId: 'gated-1' })),
    ).rejects.toBeInstanceOf(JobIdTakenError);
    await fairness.resume('fair', 'waiting-co');
    await waitFor(() => p.runs.some((run) => run.jobId === 'gated-1'), 'gated job to run');
    expect(p.runs.filter((run) => run.jobId === 'gated-1').map((r) => r.tenantId)).toEqual([
      'waiting-co',
    ]);
  });
});

describe('tenant ids the envelope cannot carry are refused as InvalidTenantIdError', () => {
  const long = 'a'.repeat(65);
  it('refuses a 65-character id (the pattern admits it) on add, addBulk and addForTenant', async () => {
    for (const kind of KINDS) {
      const queue = p.queue(kind);
      await refusedCleanly(() => queue.addForTenant(long, 'x', {}), InvalidTenantIdError);
      await refusedCleanly(
        () => Promise.resolve().then(() => as(long, () => queue.add('x', {}))),
        InvalidTenantIdError,
      );
      await refusedCleanly(
        () =>
          Promise.resolve().then(() => as(long, () => queue.addBulk([{ name: 'x', data: {} }]))),
        InvalidTenantIdError,
      );
    }
    const { id } = await p.queue('plain').addForTenant('a'.repeat(64), 'x', {});
    await waitFor(() => p.runs.some((run) => run.jobId === id), '64-char tenant job');
  });
});
