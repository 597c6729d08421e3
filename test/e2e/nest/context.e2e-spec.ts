import { Injectable, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Queue } from 'bullmq';
import {
  InjectTenantQueue,
  OnTenantWorkerEvent,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

interface Seen {
  jobId: string;
  label: string;
  where: string;
  tenantId: string | undefined;
}

const seen: Seen[] = [];
const active: Seen[] = [];

function recorder(concurrency: number) {
  @TenantProcessor('ctx', { concurrency })
  class ContextProcessor extends TenantWorkerHost {
    constructor(private readonly tenant: TenantContext) {
      super();
    }

    async process(job: TenantJob<{ label: string; failHalfway?: boolean }>) {
      const note = (where: string) =>
        seen.push({
          jobId: job.id!,
          label: job.data.label,
          where,
          tenantId: this.tenant.tenantId,
        });
      note('start');
      await sleep(Math.random() * 15);
      note('after-await-1');
      await Promise.all([sleep(Math.random() * 5), Promise.resolve()]);
      if (job.data.failHalfway) {
        note('before-throw');
        throw new Error('half-way failure');
      }
      await new Promise((resolve) => setImmediate(resolve));
      note('end');
      return {
        tenant: this.tenant.tenantId,
        envelopeTenant: job.tenant?.tenantId,
      };
    }

    // BullMQ emits `active` before the job is opened: job.tenant is there all the same.
    @OnTenantWorkerEvent('active')
    onActive(job: TenantJob<{ label: string }>) {
      active.push({
        jobId: job.id!,
        label: job.data.label,
        where: job.tenant?.tenantId ?? 'no job.tenant',
        tenantId: this.tenant.tenantId,
      });
    }

    @OnTenantWorkerEvent('completed')
    onCompleted(job: TenantJob<{ label: string }>) {
      seen.push({
        jobId: job.id!,
        label: job.data.label,
        where: 'completed-event',
        tenantId: this.tenant.tenantId,
      });
    }

    @OnTenantWorkerEvent('failed')
    onFailed(job: TenantJob<{ label: string }>) {
      seen.push({
        jobId: job.id!,
        label: job.data.label,
        where: 'failed-event',
        tenantId: this.tenant.tenantId,
      });
    }
  }
  return ContextProcessor;
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('ctx')
    readonly queue: TenantQueue<{ label: string; failHalfway?: boolean }>,
    readonly tenant: TenantContext,
  ) {}
}

async function boot(concurrency: number): Promise<TestingModule> {
  @Module({
    imports: [
      ...testRootImports(uniquePrefix()),
      TenantQueueModule.registerQueue({
        name: 'ctx',
        systemJobs: ['system-noop'],
        attempts: 1,
      }),
    ],
    providers: [recorder(concurrency), Producer],
  })
  class AppModule {}
  const moduleRef = await bootTestModule({
    imports: [AppModule],
  });
  return moduleRef;
}

describe.each([1, 10])('tenant context across the queue (concurrency %i)', (concurrency) => {
  let moduleRef: TestingModule;
  let producer: Producer;
  let bull: Queue;

  beforeAll(async () => {
    seen.length = 0;
    active.length = 0;
    moduleRef = await boot(concurrency);
    producer = moduleRef.get(Producer);
    bull = moduleRef.get(TenantQueueRegistry).getQueue('ctx').bullQueue;
  });

  afterAll(async () => {
    await moduleRef.close();
  });

  it('gives each job and each event exactly its own tenant, or none', async () => {
    const expected = new Map<string, string | undefined>();
    const outcome = new Map<string, 'completed' | 'failed'>();
    for (let round = 0; round < 6; round++) {
      const a = await producer.tenant.run('tenant-a', () =>
        producer.queue.add('work', { label: `A${round}` }),
      );
      expected.set(a.id, 'tenant-a');
      outcome.set(a.id, 'completed');
      const b = await producer.tenant.run('tenant-b', () =>
        producer.queue.add('work', { label: `B${round}` }),
      );
      expected.set(b.id, 'tenant-b');
      outcome.set(b.id, 'completed');
      // A system job written straight to BullMQ, without an envelope: it runs with no tenant.
      const none = await bull.add(
        'system-noop',
        { label: `none${round}` },
        { jobId: `none-${round}` },
      );
      expected.set(none.id!, undefined);
      outcome.set(none.id!, 'completed');
      const failing = await producer.tenant.run('tenant-a', () =>
        producer.queue.add('work', {
          label: `Afail${round}`,
          failHalfway: true,
        }),
      );
      expected.set(failing.id, 'tenant-a');
      outcome.set(failing.id, 'failed');
    }

    await waitFor(
      () => seen.filter((s) => s.where.endsWith('-event')).length === expected.size,
      'every job to finish',
    );

    for (const record of seen) {
      expect({ ...record, tenantId: record.tenantId }).toEqual({
        ...record,
        tenantId: expected.get(record.jobId),
      });
    }
    for (const [jobId, result] of outcome) {
      const events = seen.filter((s) => s.jobId === jobId && s.where.endsWith('-event'));
      expect(events.map((e) => e.where)).toEqual([`${result}-event`]);
      const steps = seen
        .filter((s) => s.jobId === jobId && !s.where.endsWith('-event'))
        .map((s) => s.where);
      expect(steps).toEqual(
        result === 'failed'
          ? ['start', 'after-await-1', 'before-throw']
          : ['start', 'after-await-1', 'end'],
      );
    }
    // Each job's `active` event: its tenant in the context and on job.tenant (none for the
    // system jobs without an envelope).
    const activeOf = () => active.filter((record) => expected.has(record.jobId));
    await waitFor(() => activeOf().length === expected.size, 'every active event');
    for (const record of activeOf()) {
      const tenant = expected.get(record.jobId);
      expect([record.tenantId, record.where]).toEqual([tenant, tenant ?? 'no job.tenant']);
    }
    const failed = await bull.getJob([...outcome].find(([, r]) => r === 'failed')![0]);
    expect(failed?.failedReason).toBe('half-way failure');
    const done = await bull.getJob(
      [...outcome].find(([id]) => expected.get(id) === 'tenant-b')![0],
    );
    expect(done?.returnvalue).toEqual({
      tenant: 'tenant-b',
      envelopeTenant: 'tenant-b',
    });
  });

  it('leaves no tenant behind outside jobs', () => {
    expect(producer.tenant.tenantId).toBeUndefined();
  });
});
