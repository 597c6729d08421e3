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
  TenantWorkerHost,
  withRunOptions,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

jest.setTimeout(30_000);

type Payload = { label: string; hang?: boolean };
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

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('idem') readonly idem: TenantQueue<Payload>,
    @InjectTenantQueue('short') readonly short: TenantQueue<Payload>,
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
        ),
      ],
      providers: [IdempotentProcessor, ShortMemoryProcessor, Producer],
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
