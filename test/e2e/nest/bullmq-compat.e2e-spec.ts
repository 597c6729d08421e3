import { BullModule, InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Injectable, Module, OnModuleInit, Scope, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import { Job, Queue } from 'bullmq';
import IORedis from 'ioredis';
import {
  getTenantQueueToken,
  InMemoryTenantDirectory,
  InjectTenantQueue,
  InvalidTenantQueueOptionsError,
  OnTenantWorkerEvent,
  TenantContext,
  TenantFairness,
  TenantJob,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantQueueRootMissingError,
} from '../../../lib';
import { TenantBullMqModule } from '../../../lib/bullmq-compat';
import { bullClient } from '../../../lib/core/bullmq';
import { redisConnection, uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

interface Seen {
  queue: string;
  label: string;
  tenantId: string | undefined;
  dataKeys: string[];
}
const seen: Seen[] = [];

// eslint-disable-next-line @typescript-eslint/no-require-imports
const NEST_MAJOR = Number(require('@nestjs/common/package.json').version.split('.')[0]);

// Plain @nestjs/bullmq processors, as an app already has them: nothing of this module but the
// TenantContext they read to show which tenant they ran as.
@Processor('media', { concurrency: 4 })
class MediaProcessor extends WorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: Job<{ label: string }>): Promise<string | undefined> {
    const record = (tenantId: string | undefined) =>
      seen.push({
        queue: 'media',
        label: job.data.label,
        tenantId,
        dataKeys: Object.keys(job.data),
      });
    const before = this.tenant.tenantId;
    await sleep(Math.random() * 10);
    record(this.tenant.tenantId === before ? before : `changed:${before}`);
    return this.tenant.tenantId;
  }
}

@Processor('fair-media')
class FairMediaProcessor extends WorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: Job<{ label: string }>): Promise<void> {
    await sleep(5);
    seen.push({
      queue: 'fair-media',
      label: job.data.label,
      tenantId: this.tenant.tenantId,
      dataKeys: Object.keys(job.data),
    });
  }
}

/** Waits for BullMQ's signal (`worker.cancelJob`), then fails with what it saw. */
async function untilCancelled(signal: AbortSignal | undefined, as: string | undefined) {
  if (!signal) throw new Error('no signal');
  await new Promise((done) => signal.addEventListener('abort', done, { once: true }));
  throw new Error(`cancelled as ${as}`);
}

// Processors that declare BullMQ's third parameter: one on a tenant queue, one on a plain queue.
// The tenant-aware replacement of @OnWorkerEvent on a processor kept as it is.
const tenantEvents: string[] = [];
@Processor('events')
class EventsProcessor extends WorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: Job<{ fail?: boolean }>): Promise<void> {
    if (job.data.fail) throw new Error('failed on purpose');
  }

  /** BullMQ emits `active` before the job is opened: `job.tenant` comes from its envelope. */
  @OnTenantWorkerEvent('active')
  active(job: TenantJob): void {
    tenantEvents.push(`active:${this.tenant.tenantId}:${job.tenant?.tenantId}`);
  }

  @OnTenantWorkerEvent('completed')
  completed(): void {
    tenantEvents.push(`completed:${this.tenant.tenantId}`);
  }

  @OnTenantWorkerEvent('failed')
  failed(): void {
    tenantEvents.push(`failed:${this.tenant.tenantId}`);
  }
}

/** Returns what JSON cannot hold: BullMQ cannot store the result of a job that ran. */
@Processor('results')
class ResultsProcessor extends WorkerHost {
  async process(): Promise<unknown> {
    return { count: 10n };
  }
}

@Processor('cancel')
class CancelProcessor extends WorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(_job: Job, _token?: string, signal?: AbortSignal): Promise<void> {
    await untilCancelled(signal, this.tenant.tenantId);
  }
}

@Processor('plain-cancel')
class PlainCancelProcessor extends WorkerHost {
  async process(_job: Job, _token?: string, signal?: AbortSignal): Promise<void> {
    await untilCancelled(signal, 'plain');
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('media') readonly media: TenantQueue<{ label: string }>,
    @InjectTenantQueue('fair-media') readonly fair: TenantQueue<{ label: string }>,
    @InjectQueue('media') readonly rawMedia: Queue,
    @InjectTenantQueue('cancel') readonly cancel: TenantQueue<object>,
    @InjectTenantQueue('events') readonly events: TenantQueue<{ fail?: boolean }>,
    @InjectTenantQueue('results') readonly results: TenantQueue<object>,
    @InjectQueue('plain-cancel') readonly plainCancel: Queue,
    readonly tenant: TenantContext,
  ) {}
}

describe('@nestjs/bullmq processors on tenant queues (TenantBullMqModule)', () => {
  let moduleRef: TestingModule;
  let producer: Producer;

  beforeAll(async () => {
    @Module({
      imports: [
        TenantBullMqModule.registerQueue(
          { name: 'media', attempts: 1 },
          // One slot per tenant and a long lease: only slot release lets the next job in.
          {
            name: 'fair-media',
            attempts: 1,
            fairness: { defaultConcurrency: 1, leaseMs: 120_000 },
          },
          { name: 'cancel', attempts: 1 },
          { name: 'events', attempts: 1 },
          { name: 'results', attempts: 3 },
        ),
        // A plain queue beside them, as the app had it.
        BullModule.forRoot({ connection: redisConnection(), prefix: uniquePrefix('bull') }),
        BullModule.registerQueue({ name: 'plain-cancel' }),
      ],
      providers: [
        MediaProcessor,
        FairMediaProcessor,
        CancelProcessor,
        PlainCancelProcessor,
        EventsProcessor,
        ResultsProcessor,
        Producer,
      ],
    })
    class MediaModule {}
    const directory = new InMemoryTenantDirectory([
      { id: 'acme' },
      { id: 'globex' },
      { id: 'initech', status: 'suspended' },
    ]);
    moduleRef = await bootTestModule({
      imports: [
        ...testRootImports(uniquePrefix('bmq'), { directory: { useValue: directory } }),
        MediaModule,
      ],
    });
    producer = moduleRef.get(Producer);
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  it('runs each job of an unmodified WorkerHost in exactly its tenant, and refuses one without', async () => {
    expect(producer.rawMedia).toBe(producer.media.bullQueue);
    const expected = new Map<string, string>();
    for (let round = 0; round < 8; round++) {
      for (const tenant of ['acme', 'globex']) {
        const label = `${tenant}-${round}`;
        await producer.tenant.run(tenant, () => producer.media.add('resize', { label }));
        expected.set(label, tenant);
      }
    }
    // Written straight to BullMQ (as old producer code would): no envelope on a tenant queue.
    const bare = await producer.rawMedia.add('resize', { label: 'bare' });

    await waitFor(async () => (await bare.getState()) === 'failed', 'the bare job to be refused');
    await waitFor(() => seen.filter((s) => s.queue === 'media').length === expected.size, 'jobs');

    const media = seen.filter((s) => s.queue === 'media');
    expect(media.map((s) => s.label)).not.toContain('bare');
    for (const record of media) {
      expect(record).toEqual({
        queue: 'media',
        label: record.label,
        tenantId: expected.get(record.label),
        dataKeys: ['label'],
      });
    }
    const refused = await producer.rawMedia.getJob(bare.id!);
    expect(refused?.failedReason).toMatch(/^\[cancelled:MISSING_TENANT\]/);
    expect(refused?.failedReason).toContain('"media"');
    expect(producer.tenant.tenantId).toBeUndefined();
  });

  it("keeps BullMQ's listeners out of tenant contexts after the worker is resumed inside one", async () => {
    const worker = moduleRef.get(TenantQueueRegistry).getWorker('media')!;
    const after: (string | undefined)[] = [];
    const listener = () => after.push(producer.tenant.tenantId);
    worker.on('completed', listener);
    try {
      await worker.pause();
      // BullMQ's resume() restarts the main loop in the caller's context: an admin route's.
      await producer.tenant.run('globex', () => worker.resume());
      for (let i = 0; i < 4; i++) {
        await producer.tenant.run('acme', () =>
          producer.media.add('resize', { label: `resumed-${i}` }),
        );
      }
      await waitFor(() => after.length === 4, 'the jobs after the resume');
    } finally {
      worker.off('completed', listener);
    }
    expect(after).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('gives a process() that declares the signal its signal, on tenant and plain queues (worker.cancelJob)', async () => {
    const jobs = [
      {
        worker: moduleRef.get(CancelProcessor).worker,
        job: await producer.tenant.run('acme', () => producer.cancel.add('wait', {})),
        queue: producer.cancel.bullQueue,
      },
      {
        worker: moduleRef.get(PlainCancelProcessor).worker,
        job: await producer.plainCancel.add('wait', {}),
        queue: producer.plainCancel,
      },
    ];
    const stateOf = async (queue: Queue, id: string) => (await queue.getJob(id))?.getState();
    for (const { worker, job, queue } of jobs) {
      await waitFor(async () => (await stateOf(queue, job.id!)) === 'active', 'the job to start');
      worker.cancelJob(job.id!);
    }
    const reasons = [];
    for (const { job, queue } of jobs) {
      await waitFor(async () => (await stateOf(queue, job.id!)) === 'failed', 'the job to fail');
      reasons.push((await queue.getJob(job.id!))?.failedReason);
    }
    expect(reasons).toEqual(['cancelled as acme', 'cancelled as plain']);
  });

  it("runs a @Processor's @OnTenantWorkerEvent listeners in the job's tenant", async () => {
    await producer.tenant.run('acme', () => producer.events.add('ok', {}));
    await producer.tenant.run('globex', () => producer.events.add('bad', { fail: true }));
    await waitFor(() => tenantEvents.length === 4, "both jobs' events", 5_000);
    expect(tenantEvents.sort()).toEqual([
      'active:acme:acme',
      'active:globex:globex',
      'completed:acme',
      'failed:globex',
    ]);
  });

  it('fails for good a job whose result JSON cannot hold, with the reason (it ran: no retry)', async () => {
    const job = await producer.tenant.run('acme', () => producer.results.add('count', {}));
    const bull = producer.results.bullQueue;
    await waitFor(async () => (await bull.getJob(job.id))?.finishedOn !== undefined, 'its end');
    const ended = (await bull.getJob(job.id))!;
    expect([await ended.getState(), ended.attemptsMade]).toEqual(['failed', 1]);
    expect(ended.failedReason).toMatch(/returned a value BullMQ cannot store as JSON/);
  });

  it("applies the module's job guards: a suspended tenant's job is cancelled, not run", async () => {
    const job = await producer.tenant.run('initech', () =>
      producer.media.add('resize', { label: 'initech-0' }),
    );
    const bull = producer.rawMedia;
    await waitFor(async () => (await bull.getJob(job.id))?.failedReason !== undefined, 'refusal');
    expect((await bull.getJob(job.id))?.failedReason).toMatch(/^\[cancelled:TENANT_SUSPENDED\]/);
    expect(seen.map((s) => s.label)).not.toContain('initech-0');
  });

  it('frees fair slots for jobs a @nestjs/bullmq worker ran', async () => {
    for (let i = 0; i < 6; i++) {
      await producer.tenant.run('acme', () => producer.fair.add('resize', { label: `fa${i}` }));
      await producer.tenant.run('globex', () => producer.fair.add('resize', { label: `fg${i}` }));
    }
    await waitFor(() => seen.filter((s) => s.queue === 'fair-media').length === 12, 'fair jobs');
    for (const record of seen.filter((s) => s.queue === 'fair-media')) {
      expect(record.tenantId).toBe(record.label.startsWith('fa') ? 'acme' : 'globex');
    }
    const fairness = moduleRef.get(TenantFairness);
    await waitFor(
      async () => (await fairness.getTenant('fair-media', 'acme')).inFlight === 0,
      'acme slot to be free',
    );
  });
});

describe('TenantBullMqModule refusals', () => {
  it('refuses a queue with dedicated pools when the module is declared', () => {
    const declare = () =>
      TenantBullMqModule.registerQueue({
        name: 'imports',
        pools: ['imports-acme'],
        routing: { acme: 'imports-acme' },
      });
    expect(declare).toThrow(InvalidTenantQueueOptionsError);
    expect(declare).toThrow(/@TenantProcessor\('imports'\)/);
  });

  it('refuses at boot a @Processor whose queue a leftover BullModule.registerQueue took', async () => {
    @Processor('twice')
    class TwiceProcessor extends WorkerHost {
      async process(): Promise<void> {}
    }
    @Module({
      imports: [
        BullModule.forRoot({ connection: redisConnection() }),
        BullModule.registerQueue({ name: 'twice' }),
        TenantBullMqModule.registerQueue({ name: 'twice' }),
      ],
      providers: [TwiceProcessor],
    })
    class LeftoverModule {}
    const boot = bootTestModule({
      imports: [...testRootImports(uniquePrefix('bmq-twice')), LeftoverModule],
    });
    await expect(boot).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(boot).rejects.toThrow(/Remove BullModule\.registerQueue\(\{ name: 'twice' \}\)/);
  });

  it('refuses at boot @OnTenantWorkerEvent on a @Processor of a queue TenantBullMqModule does not declare, naming the class and the fix', async () => {
    const calls: string[] = [];
    @Processor('loose')
    class LooseProcessor extends WorkerHost {
      async process(): Promise<void> {}

      @OnTenantWorkerEvent('completed')
      done(): void {
        calls.push('completed');
      }
    }
    @Module({
      imports: [
        BullModule.forRoot({ connection: redisConnection(), prefix: uniquePrefix('bull') }),
        BullModule.registerQueue({ name: 'loose' }),
        // A bridge on another queue does not bind it.
        TenantBullMqModule.registerQueue({ name: 'bridged' }),
      ],
      providers: [LooseProcessor],
    })
    class LooseModule {}
    const boot = bootTestModule({
      imports: [...testRootImports(uniquePrefix('bmq-loose')), LooseModule],
    });
    await expect(boot).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(boot).rejects.toThrow(
      /@OnTenantWorkerEvent\('completed'\) on LooseProcessor\.done: no worker of the module calls it.*TenantBullMqModule\.registerQueue\(\{ name \}\) in place of BullModule\.registerQueue/,
    );
    expect(calls).toEqual([]);
  });

  it('refuses at boot @OnTenantWorkerEvent on a provider that is no processor', async () => {
    @Injectable()
    class Alerts {
      @OnTenantWorkerEvent('failed')
      onFailed(): void {}
    }
    const boot = bootTestModule({
      imports: [...testRootImports(uniquePrefix('bmq-alerts'))],
      providers: [Alerts],
    });
    await expect(boot).rejects.toThrow(
      /@OnTenantWorkerEvent\('failed'\) on Alerts\.onFailed: .*not a @TenantProcessor\. Move the method to the @TenantProcessor class/,
    );
  });

  /**
   * Boots an app whose `@Processor('parked')` worker takes the job queued before it, then fails:
   * `failure` is what the app adds to fail it. Its workers start (BullModule's init) before the
   * bridge's bootstrap; whatever fails the boot, the job goes back to `wait` as it was, for an app
   * that does boot, and never runs (without its tenant or with it) in the one that failed.
   */
  async function parkedJobOfFailedBoot(failure: {
    queues: { name: string }[];
    providers: Type[];
    error: RegExp;
    /** A fair queue: by turn its job has a priority, and goes back to `prioritized`. */
    fair?: boolean;
  }) {
    const prefix = uniquePrefix('bmq-parked');
    const parkedQueue = { name: 'parked', ...(failure.fair ? { fairness: {} } : {}) };
    const producerRef = await bootTestModule({
      imports: [...testRootImports(prefix), TenantQueueModule.registerQueue(parkedQueue)],
    });
    try {
      const parked = producerRef.get<TenantQueue>(getTenantQueueToken('parked'));
      const job = await producerRef
        .get(TenantContext)
        .run('acme', () => parked.add('resize', { label: 'parked-0' }));
      const ran: (string | undefined)[] = [];
      @Processor('parked')
      class ParkedProcessor extends WorkerHost {
        constructor(private readonly tenant: TenantContext) {
          super();
        }
        async process(): Promise<void> {
          ran.push(this.tenant.tenantId);
        }
      }
      // Holds the boot between the workers' start and the bootstrap until the job is taken, then
      // drops the queue's marker: one there after the failed boot woke the workers for the job.
      @Injectable()
      class UntilTaken implements OnModuleInit {
        constructor(@InjectQueue('parked') private readonly queue: Queue) {}
        async onModuleInit(): Promise<void> {
          await waitFor(async () => (await this.queue.getActiveCount()) === 1, 'the job taken');
          await (await bullClient(this.queue)).del(this.queue.keys.marker);
        }
      }
      @Module({
        imports: [TenantBullMqModule.registerQueue(parkedQueue, ...failure.queues)],
        providers: [ParkedProcessor, UntilTaken, ...failure.providers],
      })
      class FailingModule {}
      const boot = bootTestModule({ imports: [...testRootImports(prefix), FailingModule] });
      await expect(boot).rejects.toThrow(failure.error);

      const after = await parked.bullQueue.getJob(job.id);
      expect(await after?.getState()).toBe(failure.fair ? 'prioritized' : 'waiting');
      // A worker blocked waiting for a job is woken for it (BullMQ adds no marker for a job it
      // puts back into prioritized: the module does).
      const bull = parked.bullQueue;
      expect(await (await bullClient(bull)).zscore(bull.keys.marker, '0')).toBe('0');
      expect(after?.attemptsMade).toBe(0);
      expect(after?.failedReason).toBeUndefined();
      expect(ran).toEqual([]);
    } finally {
      await producerRef.close();
    }
  }

  // On a fair queue by turn the job has a priority: it goes back to 'prioritized' at its turn.
  it.each([
    ['wait', 'parked-scoped', false],
    ['prioritized', 'parked-scoped-fair', true],
  ] as const)(
    "refuses a request-scoped @Processor, and adopts none: a job another one took goes back to '%s', unrun, the workers woken",
    async (_, name, fair) => {
      @Processor({ name, scope: Scope.REQUEST })
      class ScopedProcessor extends WorkerHost {
        async process(): Promise<void> {}
      }
      await parkedJobOfFailedBoot({
        queues: [{ name }],
        providers: [ScopedProcessor],
        error: new RegExp(
          `@Processor class ScopedProcessor on tenant queue "${name}" is request-scoped`,
        ),
        fair,
      });
    },
  );

  // Nest 11 runs no hook after a failed init (its close() waits for the init and throws): the job
  // stays with the failed app's worker, unrun, until that process ends and it stalls back.
  const onNest12 = NEST_MAJOR >= 12 ? it : it.skip;
  onNest12(
    "a boot failing before the bootstrap: the job a @Processor took goes back to 'wait', unrun",
    async () => {
      @Injectable()
      class FailsOnceTheJobIsTaken implements OnModuleInit {
        constructor(@InjectQueue('parked') private readonly queue: Queue) {}
        async onModuleInit(): Promise<void> {
          await waitFor(async () => (await this.queue.getActiveCount()) === 1, 'the job taken');
          throw new Error('the database is down');
        }
      }
      await parkedJobOfFailedBoot({
        queues: [],
        providers: [FailsOnceTheJobIsTaken],
        error: /the database is down/,
      });
    },
  );

  it('an ioredis instance without maxRetriesPerRequest: null fails the boot (its workers run on it)', async () => {
    @Processor('retries')
    class RetriesProcessor extends WorkerHost {
      async process(): Promise<void> {}
    }
    @Module({
      imports: [TenantBullMqModule.registerQueue({ name: 'retries' })],
      providers: [RetriesProcessor],
    })
    class RetriesModule {}
    const client = new IORedis({ ...redisConnection(), lazyConnect: true });
    try {
      const boot = bootTestModule({
        imports: [
          ClsModule.forRoot({ global: true }),
          TenantQueueModule.forRoot({ connection: client, prefix: uniquePrefix('bmq-retries') }),
          RetriesModule,
        ],
      });
      // BullMQ (5 and 6) refuses it as it builds the worker, in BullModule's init.
      await expect(boot).rejects.toThrow(/maxRetriesPerRequest must be null/);
    } finally {
      client.disconnect();
    }
  });

  it('a name TenantQueueModule.registerQueue declares with other options: the typed error; the same options boot', async () => {
    @Processor('clash')
    class ClashProcessor extends WorkerHost {
      async process(): Promise<void> {}
    }
    @Module({
      imports: [TenantBullMqModule.registerQueue({ name: 'clash' })],
      providers: [ClashProcessor],
    })
    class MediaModule {}
    const other = (options: object) => {
      @Module({ imports: [TenantQueueModule.registerQueue({ name: 'clash', ...options })] })
      class ReportsModule {}
      return ReportsModule;
    };
    const prefix = uniquePrefix('bmq-clash');
    const clash = bootTestModule({
      imports: [...testRootImports(prefix), MediaModule, other({ fairness: {} })],
    });
    await expect(clash).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(clash).rejects.toThrow(
      /Queue "clash" is registered twice with different options \(fairness\)/,
    );
    const same = await bootTestModule({
      imports: [...testRootImports(prefix), MediaModule, other({})],
    });
    await same.close();
  });

  it('without TenantQueueModule.forRoot: the typed error naming it, not a DI error', async () => {
    @Processor('rootless')
    class RootlessProcessor extends WorkerHost {
      async process(): Promise<void> {}
    }
    @Module({
      imports: [
        BullModule.forRoot({ connection: redisConnection() }),
        TenantBullMqModule.registerQueue({ name: 'rootless' }),
      ],
      providers: [RootlessProcessor],
    })
    class RootlessModule {}
    for (const imports of [
      [RootlessModule],
      [ClsModule.forRoot({ global: true }), RootlessModule],
    ]) {
      const compiled = Test.createTestingModule({ imports }).compile();
      await expect(compiled).rejects.toBeInstanceOf(TenantQueueRootMissingError);
      await expect(compiled).rejects.toThrow(
        /registerQueue\(\{ name: 'rootless' \}\) needs TenantQueueModule\.forRoot\(\{ connection \}\)/,
      );
    }
  });
});
