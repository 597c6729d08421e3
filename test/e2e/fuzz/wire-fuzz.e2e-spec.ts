import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  TenantContext,
  TenantEnvelope,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
  parseCancelReason,
} from '../../../lib';
import { signEnvelope } from '../../../lib/core/envelope/envelope-signature';
import { TenantQueueRedis } from '../../../lib/core/redis/tenant-queue.redis';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

/**
 * The wire fuzz suite: malformed and forged jobs written straight into BullMQ (past the producer)
 * on a plain and a fair queue, envelope signing on and off, with good jobs interleaved. Every bad
 * job must end failed as `[cancelled:...]` without its handler running; every good job must
 * complete under exactly its own tenant; the workers must stay alive throughout.
 * Replay a failure with TQ_FUZZ_SEED=<the printed seed>; TQ_FUZZ_COUNT sets bad jobs per mode.
 */
jest.setTimeout(120_000);

const SEED = Number(process.env.TQ_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const BAD_PER_MODE = Number(process.env.TQ_FUZZ_COUNT ?? 600);
const GOOD_EVERY = 10;
const SECRET = 'fuzz-secret-0123456789-0123456789-abcdef';
const OTHER_SECRET = 'other-secret-0123456789-0123456789-abcd';
const TENANTS = ['acme', 'globex', 'initech'];

process.stdout.write(`wire-fuzz: seed ${SEED} (replay with TQ_FUZZ_SEED=${SEED})\n`);

/** mulberry32: a small seeded PRNG. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
  };
}
type Rng = ReturnType<typeof prng>;

const handled = new Map<string, string | undefined>();

@TenantProcessor('fuzz-plain', { concurrency: 50 })
class PlainProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob) {
    handled.set(job.id!, this.tenant.tenantId);
  }
}

@TenantProcessor('fuzz-fair', { concurrency: 50 })
class FairProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob) {
    handled.set(job.id!, this.tenant.tenantId);
  }
}

function goodEnvelope(rng: Rng): TenantEnvelope {
  return {
    v: 1,
    tenantId: rng.pick(TENANTS),
    actorType: 'system',
    enqueuedAt: new Date().toISOString(),
    correlationId: `c-${rng.int(1e9)}`,
  };
}

const JUNK: readonly unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  NaN,
  '',
  ' ',
  'x',
  [],
  [1, 'a'],
  {},
  { nested: { deeper: [null] } },
  'a'.repeat(65),
  'ü'.repeat(40),
  '../etc',
  'a b',
  'a:b',
  '{tag}',
  '__proto__',
  'constructor',
];

/** Values each envelope field refuses (null only where the field is required). */
const INVALID: Record<string, readonly unknown[]> = {
  v: [0, 2, '1', null, [], {}, true],
  tenantId: [
    null,
    0,
    '',
    ' ',
    'a'.repeat(65),
    '../etc',
    'a b',
    'a:b',
    '{tag}',
    '__proto__',
    [],
    {},
  ],
  actorType: ['root', '', null, 1, []],
  actorId: ['', 'a b', 'x'.repeat(129), 1, [], {}, 'ü'],
  enqueuedAt: [null, 1, '2024-01-01', [], {}, '2024-01-01T00:00:00+02:00'],
  correlationId: ['', 'a b', 'c'.repeat(129), 1, null, []],
  locale: ['x', '1234', 'en_US', 1, [], {}],
  environment: ['', 'a b', 'e'.repeat(33), 1, []],
  strategy: ['root', '', 1, [], 'constructor'],
  traceparent: ['00-0', 'x', 1, [], `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`],
  sig: ['short', 'A'.repeat(44), 1, [], 'A'.repeat(42) + '='],
};

/** A JSON value nested `depth` levels deep. */
function deep(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? { a: value } : [value];
  return value;
}

/** Builds one malformed or forged job's data, and names the mutation. */
interface BadJob {
  kind: string;
  data: unknown;
  /** Impossible calendar dates of the envelope's own format: refused, or run as their tenant. */
  tolerable?: string;
}

function badJob(rng: Rng, signing: boolean): BadJob {
  const env = goodEnvelope(rng) as unknown as Record<string, unknown>;
  const withEnv = (envelope: unknown, extra: Record<string, unknown> = {}) => ({
    ...extra,
    payload: rng.int(1000),
    _tenant: envelope,
  });
  const kinds: (() => BadJob)[] = [
    () => ({ kind: 'no envelope', data: { payload: rng.int(10) } }),
    () => ({ kind: 'data not an object', data: rng.pick(['str', 42, null, [1, 2], true]) }),
    () => ({ kind: 'envelope junk', data: withEnv(rng.pick(JUNK)) }),
    () => {
      const field = rng.pick(['v', 'tenantId', 'actorType', 'enqueuedAt', 'correlationId']);
      delete env[field];
      return { kind: `missing ${field}`, data: withEnv(env) };
    },
    () => {
      const field = rng.pick(Object.keys(INVALID));
      env[field] = rng.pick(INVALID[field]);
      return { kind: `wrong ${field}`, data: withEnv(env) };
    },
    () => {
      env[rng.pick(['extra', 'tenant', 'admin', 'sig2', 'constructor'])] = rng.pick(JUNK);
      return { kind: 'extra field', data: withEnv(env) };
    },
    () => ({
      kind: '__proto__ key',
      data: JSON.parse(
        `{"payload":1,"_tenant":{"__proto__":{"tenantId":"acme"},"v":1,"actorType":"system"}}`,
      ),
    }),
    () => {
      env.correlationId = 'c'.repeat(100_000 + rng.int(100_000));
      return { kind: 'huge string', data: withEnv(env) };
    },
    () => {
      env.tenantId = 't'.repeat(65 + rng.int(10_000));
      return { kind: 'huge tenant id', data: withEnv(env) };
    },
    () => {
      env.enqueuedAt = rng.pick(['yesterday', '', '2024-1-1T00:00:00Z', '2024-01-01 00:00:00']);
      return { kind: 'malformed date', data: withEnv(env) };
    },
    () => {
      env.enqueuedAt = rng.pick([
        '2024-19-39T29:59:59Z',
        '2024-02-31T12:00:00Z',
        '2024-13-01T00:00:00Z',
        '2024-00-10T00:00:00Z',
      ]);
      const tolerable = signing ? undefined : (env.tenantId as string);
      return { kind: 'impossible date', data: withEnv(env), tolerable };
    },
    () => ({ kind: 'nested junk', data: withEnv({ ...env, v: deep(5 + rng.int(30)) }) }),
    () => ({ kind: 'deep payload, bad envelope', data: { deep: deep(40), _tenant: [env] } }),
  ];
  if (signing) {
    kinds.push(
      () => ({ kind: 'forged, unsigned', data: withEnv(env) }),
      () => {
        env.sig = 'A'.repeat(43);
        return { kind: 'forged, bad signature', data: withEnv(env) };
      },
      () => {
        env.sig = signEnvelope(env as unknown as TenantEnvelope, OTHER_SECRET);
        return { kind: 'forged, unknown secret', data: withEnv(env) };
      },
      () => {
        env.sig = signEnvelope(env as unknown as TenantEnvelope, SECRET);
        env.tenantId = rng.pick(TENANTS.filter((t) => t !== env.tenantId));
        return { kind: 'forged, tenant swapped after signing', data: withEnv(env) };
      },
    );
  }
  return rng.pick(kinds)();
}

describe.each([
  ['on', true],
  ['off', false],
])('wire fuzz, envelope signing %s', (_mode, signing) => {
  let app: TestingModule;
  let queues: TenantQueue[];

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('fuzz'), {
          envelope: signing ? { secret: [SECRET] } : undefined,
        }),
        TenantQueueModule.registerQueue(
          { name: 'fuzz-plain', attempts: 1 },
          { name: 'fuzz-fair', attempts: 1, fairness: true },
        ),
      ],
      providers: [PlainProcessor, FairProcessor],
    })
    class FuzzModule {}
    app = await Test.createTestingModule({ imports: [FuzzModule] }).compile();
    app.useLogger(false);
    await app.init();
    const registry = app.get(TenantQueueRegistry);
    queues = [registry.getQueue('fuzz-plain'), registry.getQueue('fuzz-fair')];
  });

  afterAll(async () => {
    await app?.close();
  });

  it(`refuses every malformed${signing ? ' or forged' : ''} job with a reason; good jobs run as their tenant`, async () => {
    const rng = prng(SEED + (signing ? 1 : 2));
    const bad = new Map<string, { queue: TenantQueue; kind: string; tolerable?: string }>();
    const good = new Map<string, { queue: TenantQueue; tenantId: string }>();
    let n = 0;
    while (n < BAD_PER_MODE) {
      const queue = queues[n % 2];
      const chunk = Array.from({ length: Math.min(GOOD_EVERY, BAD_PER_MODE - n) }, () =>
        badJob(rng, signing),
      );
      const added = await queue.bullQueue.addBulk(
        chunk.map((job, i) => ({
          name: 'fuzz',
          data: job.data,
          opts: { jobId: `bad-${n + i}`, removeOnFail: false },
        })),
      );
      added.forEach((job, i) => bad.set(job.id!, { queue, ...chunk[i] }));
      n += chunk.length;
      const tenantId = rng.pick(TENANTS);
      const enqueued = await queue.addForTenant(tenantId, 'good', { n });
      good.set(enqueued.id, { queue, tenantId });
    }

    const redis = app.get(TenantQueueRedis).client;
    const states = async (ids: string[], queue: TenantQueue) => {
      const pipe = redis.pipeline();
      for (const id of ids) {
        pipe.hmget(
          `${queue.definition.bullPrefix}:${queue.name}:${id}`,
          'finishedOn',
          'failedReason',
        );
      }
      const results = (await pipe.exec()) ?? [];
      return results.map(([, value]) => value as [string | null, string | null]);
    };
    const byQueue = <T extends { queue: TenantQueue }>(jobs: Map<string, T>) =>
      queues.map((queue) => [...jobs].filter(([, j]) => j.queue === queue).map(([id]) => id));

    await waitFor(
      async () => {
        for (const [i, ids] of byQueue(bad).entries()) {
          if ((await states(ids, queues[i])).some(([finished]) => finished === null)) return false;
        }
        return [...good.keys()].every((id) => handled.has(id));
      },
      'every bad job to be refused and every good job to run',
      90_000,
    );

    const kinds = new Map<string, number>();
    const reasons = new Map<string, number>();
    const escaped: string[] = [];
    let tolerated = 0;
    for (const [i, ids] of byQueue(bad).entries()) {
      const results = await states(ids, queues[i]);
      results.forEach(([, failedReason], k) => {
        const id = ids[k];
        const reason = parseCancelReason(failedReason ?? undefined);
        const { kind, tolerable } = bad.get(id)!;
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        if (reason && !handled.has(id)) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
        else if (tolerable && handled.get(id) === tolerable && !failedReason) tolerated++;
        else escaped.push(`${id} (${kind}): ${failedReason}`);
      });
    }
    process.stdout.write(
      `wire-fuzz signing ${signing ? 'on' : 'off'} seed ${SEED}: ${bad.size} bad, ` +
        `${good.size} good; refused ${JSON.stringify(Object.fromEntries(reasons))}, ` +
        `tolerated ${tolerated}; ` +
        `kinds ${JSON.stringify(Object.fromEntries(kinds))}\n`,
    );
    // The workers are alive after the last bad job: one more good job per queue runs.
    const last = await Promise.all(queues.map((queue) => queue.addForTenant('acme', 'last', {})));
    await waitFor(() => last.every((job) => handled.get(job.id) === 'acme'), 'the last good jobs');
    expect(escaped.slice(0, 10)).toEqual([]);
    expect(bad.size).toBe(BAD_PER_MODE);
    for (const [id, { tenantId }] of good) expect([id, handled.get(id)]).toEqual([id, tenantId]);
  });
});
