import { Injectable, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  Idempotent,
  InjectTenantQueue,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
  withRunOptions,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

jest.setTimeout(30_000);

type Payload = { label: string; hang?: boolean; lateMs?: number };
const effects: { label: string; tenant?: string; runId?: string }[] = [];
const attempts = new Map<string, number>();

@Idempotent({ ttl: 60_000 })
@TenantProcessor('idem', { concurrency: 4, timeoutMs: 400 })
class IdempotentProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<Payload>) {
    attempts.set(job.data.label, (attempts.get(job.data.label) ?? 0) + 1);
    if (job.data.hang && attempts.get(job.data.label) === 1) return new Promise(() => undefined);
    // Ignores its deadline and returns long after its retry has completed.
    if (job.data.lateMs && attempts.get(job.data.label) === 1) {
      await sleep(job.data.lateMs);
      return { label: job.data.label, late: true };
    }
    await sleep(300);
    effects.push({ label: job.data.label, tenant: this.tenant.tenantId, runId: job.runId });
    return { label: job.data.label };
  }
}

@TenantProcessor('short', { concurrency: 2 })
class ShortMemoryProcessor extends TenantWorkerHost {
  @Idempotent({ ttl: 300 })
  async process(job: TenantJob<Payload>) {
    effects.push({ label: job.data.label, runId: job.runId });
    return job.data.label;
  }
}

/** Tenants routed to the dedicated pool `pooled-big` (a move is adding one). */
const moved = new Set<string>();

@Idempotent({ ttl: 60_000 })
@TenantProcessor('pooled', { concurrency: 2 })
class PooledProcessor extends TenantWorkerHost {
  async process(job: TenantJob<Payload>) {
    effects.push({ label: job.data.label, runId: job.runId });
    return { label: job.data.label, pool: job.queueName };
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('idem') readonly idem: TenantQueue<Payload>,
    @InjectTenantQueue('short') readonly short: TenantQueue<Payload>,
    @InjectTenantQueue('pooled') readonly pooled: TenantQueue<Payload>,
    readonly tenant: TenantContext,
  ) {}
}

describe('@Idempotent runs', () => {
  let app: TestingModule;
  let producer: Producer;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('idem')),
        TenantQueueModule.registerQueue(
          { name: 'idem', backoff: { type: 'fixed', delay: 50 } },
          { name: 'short' },
          {
            name: 'pooled',
            pools: ['pooled-big'],
            routing: (tenant) => (moved.has(tenant.tenantId) ? 'pooled-big' : undefined),
          },
        ),
      ],
      providers: [IdempotentProcessor, ShortMemoryProcessor, PooledProcessor, Producer],
    })
    class AppModule {}
    app = await bootTestModule({ imports: [AppModule] });
    producer = app.get(Producer);
  });

  afterAll(async () => {
    await app?.close();
  });

  const completed = (queue: TenantQueue<Payload>, id: string) =>
    waitFor(async () => (await queue.bullQueue.getJobState(id)) === 'completed', `job ${id}`);
  const effectsOf = (label: string) => effects.filter((e) => e.label === label);

  it('runs two concurrent jobs of one run once; the duplicate returns the first result', async () => {
    const add = (jobId: string) =>
      producer.tenant.run('acme', () =>
        producer.idem.add('work', withRunOptions({ label: 'dup' }, { runId: 'run-1' }), { jobId }),
      );
    const [first, second] = await Promise.all([add('dup-a'), add('dup-b')]);
    await completed(producer.idem, first.id);
    await completed(producer.idem, second.id);
    expect(effectsOf('dup')).toEqual([{ label: 'dup', tenant: 'acme', runId: 'run-1' }]);
    expect((await producer.idem.bullQueue.getJob(second.id))?.returnvalue).toEqual({
      label: 'dup',
    });
    expect((await producer.idem.bullQueue.getJob(first.id))?.returnvalue).toEqual({
      label: 'dup',
    });
  });

  it('keeps runs of different tenants apart, even with the same run id', async () => {
    const add = (tenantId: string) =>
      producer.tenant.run(tenantId, () =>
        producer.idem.add('work', withRunOptions({ label: 'shared' }, { runId: 'run-2' })),
      );
    const jobs = [await add('acme'), await add('globex')];
    for (const job of jobs) await completed(producer.idem, job.id);
    expect(
      effectsOf('shared')
        .map((e) => e.tenant)
        .sort(),
    ).toEqual(['acme', 'globex']);
  });

  it('lets the retry of a timed-out attempt run at once (the claim is given up)', async () => {
    const job = await producer.tenant.run('acme', () =>
      producer.idem.add('work', { label: 'hang-once', hang: true }),
    );
    await completed(producer.idem, job.id);
    expect(attempts.get('hang-once')).toBe(2);
    expect(effectsOf('hang-once')).toHaveLength(1);
    const stored = await producer.idem.bullQueue.getJob(job.id);
    expect(stored?.failedReason).toMatch(/^\[TIMEOUT\]/);
  });

  it("keeps the retry's result when the timed-out attempt returns after it", async () => {
    const add = (data: Payload) =>
      producer.tenant.run('acme', () =>
        producer.idem.add('work', withRunOptions(data, { runId: 'run-late' })),
      );
    const job = await add({ label: 'late', lateMs: 1_500 });
    await completed(producer.idem, job.id);
    expect((await producer.idem.bullQueue.getJob(job.id))?.returnvalue).toEqual({ label: 'late' });
    // The abandoned first attempt returns now, its retry long done: it must not replace the
    // recorded result, which a duplicate of the run returns.
    await sleep(1_500);
    const duplicate = await add({ label: 'late' });
    await completed(producer.idem, duplicate.id);
    expect((await producer.idem.bullQueue.getJob(duplicate.id))?.returnvalue).toEqual({
      label: 'late',
    });
    expect(effectsOf('late')).toHaveLength(1);
  });

  it('skips a completed run after its tenant moved to a dedicated pool', async () => {
    const add = () =>
      producer.tenant.run('mover', () =>
        producer.pooled.add('work', withRunOptions({ label: 'moved' }, { runId: 'run-move' })),
      );
    const first = await add();
    expect(first.queueName).toBe('pooled');
    await completed(producer.pooled, first.id);
    moved.add('mover');
    const again = await add();
    expect(again.queueName).toBe('pooled-big');
    const big = app.get(TenantQueueRegistry).getQueue<Payload>('pooled-big');
    await completed(big, again.id);
    expect(effectsOf('moved')).toHaveLength(1);
    expect((await big.bullQueue.getJob(again.id))?.returnvalue).toEqual({
      label: 'moved',
      pool: 'pooled',
    });
  });

  it('forgets a completed run after its ttl', async () => {
    const add = (jobId: string) =>
      producer.tenant.run('acme', () =>
        producer.short.add('work', withRunOptions({ label: 'ttl' }, { runId: 'run-3' }), {
          jobId,
        }),
      );
    await completed(producer.short, (await add('ttl-a')).id);
    await completed(producer.short, (await add('ttl-b')).id);
    expect(effectsOf('ttl')).toHaveLength(1);
    await sleep(400);
    await completed(producer.short, (await add('ttl-c')).id);
    expect(effectsOf('ttl')).toHaveLength(2);
  });
});

const systemEffects: { name: string; tenant?: string }[] = [];

@Idempotent({ ttl: 60_000 })
@TenantProcessor('sys-idem', { concurrency: 2 })
class SystemIdempotentProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<Payload>) {
    systemEffects.push({ name: job.name, tenant: this.tenant.tenantId });
    return { by: this.tenant.tenantId ?? 'system' };
  }
}

/**
 * Runs without a tenant (system jobs) are keyed apart from every tenant's, whatever
 * `tenantIdPattern` admits: before, they used the key part `-`, which a tenant called `-` has too,
 * so its run was skipped and completed with the system run's result.
 */
describe('@Idempotent runs of system jobs and a tenant named "-"', () => {
  let app: TestingModule;

  afterAll(async () => {
    await app?.close();
  });

  it("never shares a run, or its result, between a system job and tenant '-'", async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('idem-sys'), { tenantIdPattern: /^[^\s]{1,64}$/u }),
        TenantQueueModule.registerQueue({ name: 'sys-idem', systemJobs: ['sweep'] }),
      ],
      providers: [SystemIdempotentProcessor],
    })
    class AppModule {}
    app = await bootTestModule({ imports: [AppModule] });
    const queue = app.get(TenantQueueRegistry).getQueue<Payload>('sys-idem');
    const done = (id: string) =>
      waitFor(async () => (await queue.bullQueue.getJobState(id)) === 'completed', `job ${id}`);
    const system = await queue.add('sweep', withRunOptions({ label: 's' }, { runId: 'nightly' }));
    await done(system.id);
    const dash = await app
      .get(TenantContext)
      .run('-', () => queue.add('work', withRunOptions({ label: 't' }, { runId: 'nightly' })));
    await done(dash.id);
    expect(systemEffects).toEqual([
      { name: 'sweep', tenant: undefined },
      { name: 'work', tenant: '-' },
    ]);
    expect((await queue.bullQueue.getJob(dash.id))?.returnvalue).toEqual({ by: '-' });
  });
});
