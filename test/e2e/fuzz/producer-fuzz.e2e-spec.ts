import { randomInt } from 'node:crypto';
import { TenantQueue, TenantQueueError, withRunOptions } from '../../../lib';
import { bootProducerApp, ProducerApp } from '../../fixtures/producer-app';
import { uniquePrefix } from '../../support/redis-url';
import { openRedis, TestRedisClient } from '../../support/test-redis';
import { waitForProgress } from '../../support/wait';

/**
 * The producer under 10,000 seeded random calls (add, addBulk, addForTenant) on a plain and a
 * fair queue, with hostile tenant ids, payloads and options. Every call must end refused with a
 * typed TenantQueueError and nothing written, or accepted and later run exactly once under
 * exactly its tenant. Replay a failure with TQ_FUZZ_SEED=<seed printed below>.
 */
const CALLS = Number(process.env.TQ_FUZZ_CALLS ?? 10_000);
const BATCH = 250;
const SEED = Number(process.env.TQ_FUZZ_SEED ?? randomInt(2 ** 31));

/** mulberry32: small, seedable, good enough to pick cases. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Admits ':', braces, unicode and up to 100 characters; the envelope's limit (64) still holds.
const PATTERN = /^[^\s]{1,100}$/u;
const GOOD_TENANTS = [
  'acme',
  'globex',
  'constructor',
  '__proto__',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'q',
  'q:entries',
  'a:b:c',
  '{x}',
  '%41',
  'ü-mandant',
  '日本',
  '🙂',
  'a'.repeat(64),
];
const BAD_TENANTS: unknown[] = ['a'.repeat(65), '', 'two words', 'tab\there'];
/** Not even strings: only `addForTenant` takes them from a caller (`TenantContext.run` is typed). */
const NOT_STRINGS: unknown[] = [42, null, undefined, { id: 'acme' }];

const BAD_OPTIONS: object[] = [
  { jobId: '1001' },
  { jobId: 'a:1' },
  { jobId: '' },
  { jobId: '0' },
  { jobId: 7 },
  { priority: 1.5 },
  { priority: 3e6 },
  { priority: -1 },
  { delay: NaN },
  { delay: -5 },
  { attempts: NaN },
  { deduplication: {} },
  { removeOnComplete: 'x' },
  { removeOnFail: { age: 'x' } },
  { lifo: true, priority: 3 },
  { backoff: { type: 'fixed', delay: 1, jitter: 2 } },
  { debounce: { id: 'x' } },
  { repeat: { every: 1000 } },
  { lane: 'nope' },
];

const circular = () => {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
};
const BAD_PAYLOADS: (() => unknown)[] = [
  () => [1, 2],
  () => null,
  () => 'text',
  () => new Date(),
  () => ({ _tenant: { tenantId: 'evil' } }),
  () => ({ _run: { timeoutMs: -1 } }),
  () => ({ _run: 'x' }),
  () => ({ a: 1, toJSON: () => ({}) }),
  () => ({ big: BigInt(1) }),
  circular,
  () => Object.create({ inherited: 1 }),
];

interface Expected {
  tenantId: string;
}

interface Figures {
  tried: number;
  refusedCleanly: number;
  accepted: number;
  lost: number;
  duplicated: number;
  wrongTenant: number;
  jobs: number;
}

describe(`producer fuzz: ${CALLS} seeded calls (seed ${SEED}; replay with TQ_FUZZ_SEED)`, () => {
  let p: ProducerApp;
  let redis: TestRedisClient;
  let prefix: string;

  beforeAll(async () => {
    console.log(`producer fuzz seed=${SEED} (replay: TQ_FUZZ_SEED=${SEED})`);
    prefix = uniquePrefix('fuzz');
    redis = openRedis();
    p = await bootProducerApp(
      prefix,
      { tenantIdPattern: PATTERN },
      { plain: 32, fair: 32, pooled: 1 },
    );
  });

  afterAll(async () => {
    await p?.close();
    await redis?.quit();
  });

  it('refuses cleanly or runs exactly once under exactly its tenant', async () => {
    const random = rng(SEED);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
    const expected = new Map<string, Expected>();
    /** Per queue: the tenant of each caller-chosen id accepted in an earlier batch. */
    const ownerOfId = new Map<string, Map<string, string>>([
      ['plain', new Map()],
      ['fair', new Map()],
    ]);
    const problems: string[] = [];
    const figures: Figures = {
      tried: 0,
      refusedCleanly: 0,
      accepted: 0,
      lost: 0,
      duplicated: 0,
      wrongTenant: 0,
      jobs: 0,
    };
    let nextId = 0;

    /** One generated job: payload and options, and whether it must be refused. */
    const job = (
      queue: string,
      tenantId: string | undefined,
    ): { data: any; opts?: any; bad: boolean } => {
      const r = random();
      let data: unknown = { n: nextId, s: pick(['plain', 'ü', '日本語', '🙂', 'x'.repeat(200)]) };
      let bad = false;
      if (r < 0.06) {
        data = pick(BAD_PAYLOADS)();
        bad = true;
      } else if (r < 0.09) {
        data = withRunOptions({ n: nextId }, { timeoutMs: 10_000 });
      }
      const o = random();
      let opts: any;
      if (o < 0.08) {
        opts = pick(BAD_OPTIONS);
        bad = true;
      } else if (o < 0.2) {
        opts = { jobId: `fz-${SEED}-${nextId++}` };
      } else if (o < 0.25 && (ownerOfId.get(queue)?.size ?? 0) > 0) {
        // An id some tenant used on this queue: its own repeat is harmless, another's refused.
        const owners = ownerOfId.get(queue)!;
        const ids = [...owners.keys()];
        const id = ids[Math.floor(random() * ids.length)];
        opts = { jobId: id };
        if (owners.get(id) !== tenantId) bad = true;
      } else if (o < 0.32) {
        opts = pick([{ priority: 1 + Math.floor(random() * 9) }, { delay: 20 }, { attempts: 1 }]);
      }
      return { data, opts, bad };
    };

    const callOnce = (queue: TenantQueue<any>): { run: () => Promise<any[]>; bad: boolean } => {
      const kind = random();
      const goodTenant = random() > 0.06;
      const tenantId = goodTenant
        ? pick(GOOD_TENANTS)
        : kind >= 0.85 && random() < 0.5
          ? pick(NOT_STRINGS)
          : pick(BAD_TENANTS);
      const valid = goodTenant ? (tenantId as string) : undefined;
      if (kind < 0.6) {
        const { data, opts, bad } = job(queue.name, valid);
        return {
          bad: bad || !goodTenant,
          run: async () => [
            await p.tenant.run(tenantId as string, () => queue.add('f', data, opts)),
          ],
        };
      }
      if (kind < 0.85) {
        const jobs = Array.from({ length: 1 + Math.floor(random() * 3) }, () =>
          job(queue.name, valid),
        );
        const named = jobs.map(({ data, opts }) => ({ name: 'f', data, opts }));
        return {
          bad: !goodTenant || jobs.some((j) => j.bad),
          run: () => p.tenant.run(tenantId as string, () => queue.addBulk(named)),
        };
      }
      const { data, opts, bad } = job(queue.name, valid);
      return {
        bad: bad || !goodTenant,
        run: async () => [await queue.addForTenant(tenantId as any, 'f', data, opts)],
      };
    };

    const queues = [p.queue('plain'), p.queue('fair')];
    const startedAt = Date.now();
    for (let start = 0; start < CALLS; start += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, CALLS - start) }, () =>
        callOnce(pick(queues)),
      );
      // Calls of one batch run concurrently, so ids reused within a batch are excluded from the
      // model until the batch is over (see ownerOfId below).
      const outcomes = await Promise.all(
        batch.map(({ run }) => {
          try {
            return run().then(
              (jobs) => ({ jobs, error: undefined as unknown }),
              (error: unknown) => ({ jobs: undefined, error }),
            );
          } catch (error) {
            return Promise.resolve({ jobs: undefined, error });
          }
        }),
      );
      outcomes.forEach(({ jobs, error }, i) => {
        figures.tried++;
        if (error !== undefined) {
          if (!(error instanceof TenantQueueError)) {
            problems.push(`call ${start + i}: untyped ${(error as Error)?.stack ?? String(error)}`);
          } else if (!batch[i].bad) {
            problems.push(`call ${start + i}: valid call refused: ${(error as Error).message}`);
          } else {
            figures.refusedCleanly++;
          }
          return;
        }
        if (batch[i].bad) problems.push(`call ${start + i}: bad call accepted`);
        figures.accepted++;
        for (const enqueued of jobs!) {
          const key = `${enqueued.queueName}/${enqueued.id}`;
          const before = expected.get(key);
          if (before && before.tenantId !== enqueued.tenantId) {
            problems.push(`${key} handed to ${enqueued.tenantId}, owned by ${before.tenantId}`);
          }
          expected.set(key, { tenantId: enqueued.tenantId });
          if (enqueued.id.startsWith('fz-')) {
            ownerOfId.get(enqueued.queueName)!.set(enqueued.id, enqueued.tenantId);
          }
        }
      });
    }
    figures.jobs = expected.size;
    const enqueuedAt = Date.now();

    const ranIds = new Set<string>();
    let seen = 0;
    await waitForProgress(
      () => {
        for (let i = seen; i < p.runs.length; i++)
          ranIds.add(`${p.runs[i].queue}/${p.runs[i].jobId}`);
        seen = p.runs.length;
        return [...expected.keys()].filter((id) => ranIds.has(id)).length;
      },
      expected.size,
      'fuzz jobs run',
      20_000,
    );

    const runsOf = new Map<string, string[]>();
    for (const run of p.runs) {
      const key = `${run.queue}/${run.jobId}`;
      const list = runsOf.get(key) ?? [];
      list.push(run.tenantId ?? '(none)');
      runsOf.set(key, list);
    }
    for (const [id, { tenantId }] of expected) {
      const runs = runsOf.get(id) ?? [];
      if (runs.length === 0) figures.lost++;
      if (runs.length > 1) figures.duplicated++;
      if (runs.some((t) => t !== tenantId)) figures.wrongTenant++;
    }
    // Nothing of a refused call was written: every job id in Redis is one an accepted call got.
    const stored: string[] = [];
    for (const queue of ['plain', 'fair']) {
      const base = `{${prefix}:${queue}}:${queue}:`;
      for (const key of await redis.keys(`${base}*`)) {
        if ((await redis.type(key)) === 'hash' && (await redis.hexists(key, 'data'))) {
          stored.push(`${queue}/${key.slice(base.length)}`);
        }
      }
      const gated = await redis.hkeys(`{${prefix}:${queue}}:~fair:jobs`);
      stored.push(...gated.map((id) => `${queue}/${id}`));
    }
    const extra = [...new Set(stored)].filter((id) => !expected.has(id));
    const ran = [...runsOf.keys()].filter((id) => !expected.has(id));

    console.log(
      `producer fuzz seed=${SEED} figures ${JSON.stringify(figures)} ` +
        `(calls ${enqueuedAt - startedAt} ms, runs ${Date.now() - enqueuedAt} ms)`,
    );
    expect({
      problems: problems.slice(0, 5),
      extra: extra.slice(0, 5),
      ran: ran.slice(0, 5),
    }).toEqual({ problems: [], extra: [], ran: [] });
    expect(figures.tried).toBe(CALLS);
    expect(figures.refusedCleanly + figures.accepted).toBe(CALLS);
    expect(figures.refusedCleanly).toBeGreaterThan(CALLS / 10);
    expect({
      lost: figures.lost,
      duplicated: figures.duplicated,
      wrongTenant: figures.wrongTenant,
    }).toEqual({ lost: 0, duplicated: 0, wrongTenant: 0 });
  }, 180_000);
});
