import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  InvalidJobIdError,
  InvalidJobOptionsError,
  InvalidPayloadError,
  TenantContext,
  TenantFairness,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { BULLMQ_KEY_SUFFIXES } from '../../../lib/core/queues/job-id.check';
import { FairnessStateSource } from '../../../lib/fairness/fairness-state.source';
import { bootProducerApp, ProducerApp } from '../../fixtures/producer-app';
import { uniquePrefix } from '../../support/redis-url';
import { openRedis, TestRedisClient } from '../../support/test-redis';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

const KINDS = ['plain', 'fair', 'pooled'] as const;

let redis: TestRedisClient;
let prefix: string;
let p: ProducerApp;

const as = <T>(tenantId: string, fn: () => Promise<T>) => p.tenant.run(tenantId, fn);
const bullKey = (queue: string, suffix: string) => `{${prefix}:${queue}}:${queue}:${suffix}`;

/** Another tenant's job, added now, runs: the queue still serves everyone. */
async function globexRuns(queue: (typeof KINDS)[number], what: string): Promise<void> {
  const { id } = await as('globex', () => p.queue(queue).add('after', { what }));
  await waitFor(() => p.runs.some((run) => run.jobId === id), `globex's job after ${what}`);
}

beforeAll(async () => {
  redis = openRedis();
  prefix = uniquePrefix('ids');
  p = await bootProducerApp(prefix);
});

afterAll(async () => {
  await p.close();
  await redis.quit();
});

describe("job ids that are BullMQ's key names are refused, nothing written, on every queue kind", () => {
  it('reads the names from the installed BullMQ (QueueKeys) and its scripts', () => {
    for (const name of ['wait', 'active', 'delayed', 'marker', 'completed', 'failed']) {
      expect(BULLMQ_KEY_SUFFIXES.has(name)).toBe(true);
    }
    for (const name of ['prioritized', 'paused', 'limiter', 'repeat', 'events', 'id', 'meta']) {
      expect(BULLMQ_KEY_SUFFIXES.has(name)).toBe(true);
    }
    for (const name of ['stalled', 'stalled-check', 'pc', 'de', 'waiting-children', 'priority']) {
      expect(BULLMQ_KEY_SUFFIXES.has(name)).toBe(true);
    }
  });

  for (const kind of KINDS) {
    it.each([...BULLMQ_KEY_SUFFIXES])(
      `${kind}: jobId "%s" is InvalidJobIdError; the key is untouched; globex's next job runs`,
      async (name) => {
        // The pooled queue's dedicated pool (tenant vip) is a queue of its own.
        const queues = kind === 'pooled' ? ['pooled', 'pooled-vip'] : [kind];
        const before = await Promise.all(queues.map((q) => redis.type(bullKey(q, name))));
        for (const tenant of ['acme', 'vip']) {
          await expect(
            as(tenant, () => p.queue(kind).add('x', { n: 1 }, { jobId: name })),
          ).rejects.toBeInstanceOf(InvalidJobIdError);
        }
        await expect(
          as('acme', () =>
            p.queue(kind).addBulk([
              { name: 'ok', data: {}, opts: { jobId: `fine-${kind}-${name}` } },
              { name: 'x', data: {}, opts: { jobId: name } },
            ]),
          ),
        ).rejects.toBeInstanceOf(InvalidJobIdError);
        await expect(p.queue(kind).addForTenant('acme', 'x', {}, { jobId: name })).rejects.toThrow(
          /name of one of BullMQ's own keys/,
        );
        expect(await Promise.all(queues.map((q) => redis.type(bullKey(q, name))))).toEqual(before);
        expect(await redis.exists(`{${prefix}:${kind}}:~id:fine-${kind}-${name}`)).toBe(0);
        await globexRuns(kind, name);
      },
    );
  }
});

describe("ids in the module's namespace are the module's alone", () => {
  const squats = [
    'acme-invoice-42.r1',
    'sched~acme~daily~20261101T093000Z',
    'nightly~acme~x',
    'imp~c0',
  ];
  for (const kind of KINDS) {
    it.each(squats)(`${kind}: a caller's jobId "%s" is InvalidJobIdError`, async (jobId) => {
      await expect(
        as('globex', () => p.queue(kind).add('x', {}, { jobId })),
      ).rejects.toBeInstanceOf(InvalidJobIdError);
      expect(await redis.exists(`{${prefix}:${kind}}:~id:${jobId}`)).toBe(0);
    });
  }
  it('an id that merely looks close is the caller\'s ("v1.r", "x.r1a", "a-c0")', async () => {
    for (const jobId of ['v1.r', 'x.r1a', 'a-c0']) {
      const { id } = await as('acme', () => p.queue('plain').add('x', {}, { jobId }));
      expect(id).toBe(jobId);
    }
  });
});

describe('deduplication ids are per tenant; a deduplicated add returns the job that exists', () => {
  for (const kind of ['plain', 'pooled'] as const) {
    it(`${kind}: globex's "invoice-1" is its own; acme's repeat gets acme's job`, async () => {
      const queue = p.queue(kind);
      const dedup = { deduplication: { id: `invoice-1-${kind}` }, delay: 60_000 };
      const first = await as('acme', () => queue.add('x', { who: 'acme' }, dedup));
      const other = await as('globex', () => queue.add('x', { who: 'globex' }, dedup));
      expect(other.id).not.toBe(first.id);
      const again = await as('acme', () => queue.add('x', { who: 'acme again' }, dedup));
      expect(again.id).toBe(first.id);
      const bulk = await as('acme', () =>
        queue.addBulk([{ name: 'x', data: { who: 'acme bulk' }, opts: dedup }]),
      );
      expect(bulk[0].id).toBe(first.id);
      // Every id handed back is a job that exists, of the tenant that asked.
      for (const [enqueued, tenant] of [
        [first, 'acme'],
        [other, 'globex'],
        [again, 'acme'],
      ] as const) {
        const job = await p.app
          .get(TenantQueueRegistry)
          .getQueue(enqueued.queueName)
          .bullQueue.getJob(enqueued.id);
        expect(job?.data._tenant.tenantId).toBe(tenant);
      }
      // A job without delay, deduplicated within one tenant, runs once, under its own id.
      const now = { deduplication: { id: `now-${kind}` } };
      const a = await as('globex', () => queue.add('slow', { n: 1 }, now));
      const b = await as('globex', () => queue.add('slow', { n: 2 }, now));
      const c = await as('acme', () => queue.add('slow', { n: 3 }, now));
      await waitFor(() => p.runs.some((run) => run.jobId === c.id), "acme's own job to run");
      await waitFor(() => p.runs.some((run) => run.jobId === a.id), "globex's job to run");
      // BullMQ keeps the deduplication id until the job ends: b either met a or came after it.
      expect(c.id).not.toBe(a.id);
      if (b.id !== a.id) await waitFor(() => p.runs.some((r) => r.jobId === b.id), 'b to run');
    });
  }

  it('fair: deduplication is refused at add (the gate admits later), nothing written', async () => {
    await expect(
      as('acme', () => p.queue('fair').add('x', {}, { deduplication: { id: 'invoice-1' } })),
    ).rejects.toBeInstanceOf(InvalidJobOptionsError);
    expect(await redis.keys(`{${prefix}:fair}:fair:de:*`)).toEqual([]);
  });
});

describe('the producer checks and stores one plain copy of the payload (signing off)', () => {
  const forged = { _tenant: { v: 1, tenantId: 'globex', actorType: 'system' }, n: 1 };

  /** The Proxy of the issue: `toJSON` hidden from the first read (the check), shown after. */
  const issueProxy = () => {
    let reads = 0;
    return new Proxy({ n: 1 } as Record<string, unknown>, {
      get: (target, key) =>
        key === 'toJSON' ? (++reads > 1 ? () => forged : undefined) : target[key as string],
      ownKeys: () => ['n', 'toJSON'],
      getOwnPropertyDescriptor: (target, key) =>
        key === 'toJSON'
          ? { value: undefined, enumerable: true, configurable: true, writable: true }
          : Reflect.getOwnPropertyDescriptor(target, key),
    });
  };

  for (const kind of KINDS) {
    it(`${kind}: the issue's Proxy runs as acme, with its own data and the module's envelope`, async () => {
      const { id } = await as('acme', () => p.queue(kind).add('proxy', issueProxy()));
      await waitFor(() => p.runs.some((run) => run.jobId === id), 'the proxy job to run');
      const run = p.runs.find((r) => r.jobId === id)!;
      expect(run.tenantId).toBe('acme');
      expect(run.data.n).toBe(1);
    });

    it(`${kind}: a Proxy whose copy has a toJSON is refused, nothing written`, async () => {
      const shown = new Proxy({ n: 3 } as Record<string, unknown>, {
        get: (target, key) => (key === 'toJSON' ? () => forged : target[key as string]),
        ownKeys: () => ['n', 'toJSON'],
        getOwnPropertyDescriptor: (target, key) =>
          key === 'toJSON'
            ? { value: () => forged, enumerable: true, configurable: true, writable: true }
            : Reflect.getOwnPropertyDescriptor(target, key),
      });
      const before = p.runs.length;
      await expect(as('acme', () => p.queue(kind).add('proxy', shown))).rejects.toBeInstanceOf(
        InvalidPayloadError,
      );
      await globexRuns(kind, 'proxy');
      expect(p.runs.slice(before).filter((run) => run.data.n === 3)).toEqual([]);
    });

    it(`${kind}: a Proxy that changes between reads: the copy is what runs, as acme`, async () => {
      let enumerations = 0;
      const shifty = new Proxy({ n: 2 } as Record<string, unknown>, {
        ownKeys: () => (++enumerations > 1 ? ['n', 'toJSON', '_tenant'] : ['n']),
        getOwnPropertyDescriptor: (target, key) =>
          key === 'n'
            ? Reflect.getOwnPropertyDescriptor(target, key)
            : {
                value: key === 'toJSON' ? () => forged : forged._tenant,
                enumerable: true,
                configurable: true,
              },
      });
      const { id } = await as('acme', () => p.queue(kind).add('proxy', shifty));
      await waitFor(() => p.runs.some((run) => run.jobId === id), 'the proxy job to run');
      const run = p.runs.find((r) => r.jobId === id)!;
      expect(run.tenantId).toBe('acme');
      expect(run.data.n).toBe(2);
      expect(enumerations).toBe(1);
    });
  }
});

describe('jobs without a tenant have a bucket no tenant id can name', () => {
  let app: TestingModule;
  const runs: { id: string; tenantId: string | undefined }[] = [];

  beforeAll(async () => {
    @TenantProcessor('sysfair', { concurrency: 4 })
    class Recorder extends TenantWorkerHost {
      constructor(private readonly tenant: TenantContext) {
        super();
      }
      async process(job: TenantJob) {
        runs.push({ id: job.id!, tenantId: this.tenant.tenantId });
      }
    }
    @Module({
      imports: [
        // A pattern that admits a leading "_" (and so "_system").
        ...testRootImports(uniquePrefix('sys'), { tenantIdPattern: /^[A-Za-z0-9_][\w.-]{0,63}$/ }),
        TenantQueueModule.registerQueue({
          name: 'sysfair',
          attempts: 1,
          systemJobs: ['sys'],
          fairness: { tickMs: 200 },
        }),
      ],
      providers: [Recorder],
    })
    class SystemModule {}
    app = await bootTestModule({ imports: [SystemModule] });
  });

  afterAll(() => app.close());

  it('tenant "_system" is served like any tenant: its pause, backlog and gate list hold only its jobs', async () => {
    const fairness = app.get(TenantFairness);
    const registry = app.get(TenantQueueRegistry);
    const tenant = app.get(TenantContext);
    const queue = registry.getQueue('sysfair');
    await fairness.pause('sysfair', '_system');
    const mine = await tenant.run('_system', () => queue.add('work', { secret: 'tenant' }));
    const system = await queue.add('sys', { secret: 'system' });
    await waitFor(() => runs.some((run) => run.id === system.id), 'the system job to run');
    expect(runs.find((run) => run.id === system.id)!.tenantId).toBeUndefined();
    await sleep(500);
    expect(runs.some((run) => run.id === mine.id)).toBe(false);
    const state = await fairness.getTenant('sysfair', '_system');
    expect({ paused: state.paused, backlog: state.backlog }).toEqual({ paused: true, backlog: 1 });
    const listed = await app.get(FairnessStateSource).gateJobs('sysfair', '_system', 50);
    expect(listed.map((job) => job.id)).toEqual([mine.id]);
    // Another system job while "_system" is paused: it runs all the same.
    const second = await queue.add('sys', { n: 2 });
    await waitFor(() => runs.some((run) => run.id === second.id), 'a second system job');
    await fairness.resume('sysfair', '_system');
    await waitFor(() => runs.some((run) => run.id === mine.id), "_system's own job after resume");
    expect(runs.find((run) => run.id === mine.id)!.tenantId).toBe('_system');
  });
});
