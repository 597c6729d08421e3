import { Injectable } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  DeadLetters,
  InMemoryTenantDirectory,
  InvalidJobIdError,
  NonRetryableError,
  TenantContext,
  TenantCron,
  TenantCronRun,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueRegistry,
  TenantScheduler,
  TenantWorkerHost,
  addChunked,
  formatOccurrence,
  tenantCronJobId,
  tenantScheduleJobId,
} from '../../../lib';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

/** Every run: job id and the tenant of its context. */
const runs: { jobId: string; tenantId: string | undefined }[] = [];
let fixed = false;

@TenantProcessor('work', { concurrency: 4 })
class Work extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }
  async process(job: TenantJob<{ fail?: boolean }>) {
    if (job.data.fail && !fixed) throw new NonRetryableError('not fixed yet');
    runs.push({ jobId: job.id!, tenantId: this.tenant.tenantId });
  }
}

@Injectable()
class Nightly {
  constructor(private readonly tenant: TenantContext) {}
  @TenantCron('0 9 * * *', { name: 'nightly', jobOptions: { attempts: 1 } })
  async nightly(run: TenantCronRun) {
    runs.push({ jobId: run.jobId, tenantId: this.tenant.tenantId });
  }
}

describe("ids the module makes cannot be squatted: the victim's work goes on", () => {
  let app: TestingModule;
  let work: TenantQueue<any>;
  let tenant: TenantContext;
  const clock = new ManualClock(Date.parse('2026-06-01T08:00:00Z'));
  const nine = Date.parse('2026-06-01T09:00:00Z');
  const ran = (jobId: string, tenantId: string) =>
    waitFor(
      () => runs.some((run) => run.jobId === jobId && run.tenantId === tenantId),
      `${jobId} to run as ${tenantId}`,
    );
  /** globex's add of `jobId` on `queue` is refused as InvalidJobIdError. */
  const squat = (queue: TenantQueue<any>, jobId: string) =>
    expect(tenant.run('globex', () => queue.add('squat', {}, { jobId }))).rejects.toBeInstanceOf(
      InvalidJobIdError,
    );

  beforeAll(async () => {
    app = await bootSchedulerApp({
      prefix: uniquePrefix('squat'),
      clock,
      directory: new InMemoryTenantDirectory([{ id: 'acme' }, { id: 'globex' }]),
      queues: [{ name: 'work', attempts: 1 }],
      providers: [Work, Nightly],
    });
    work = app.get(TenantQueueRegistry).getQueue('work');
    tenant = app.get(TenantContext);
  });

  afterAll(() => app.close());

  it('replay: globex cannot take "acme-invoice-42.r1"; acme replays its dead letter', async () => {
    const deadLetters = app.get(DeadLetters);
    await tenant.run('acme', () => work.add('inv', { fail: true }, { jobId: 'acme-invoice-42' }));
    await waitFor(
      async () => !!(await deadLetters.get('acme', 'acme-invoice-42')),
      'the dead letter',
    );
    await squat(work, 'acme-invoice-42.r1');
    fixed = true;
    const replayed = await deadLetters.replay('acme', 'acme-invoice-42');
    expect(replayed.id).toBe('acme-invoice-42.r1');
    await ran('acme-invoice-42.r1', 'acme');
  });

  it("schedule: globex cannot take acme's next occurrence; acme's schedule runs", async () => {
    await app.get(TenantScheduler).upsert('acme', 'daily', {
      cron: '0 9 * * *',
      job: { queue: 'work', name: 'report', data: {} },
    });
    const id = tenantScheduleJobId('acme', 'daily', nine);
    expect(id).toBe(`sched~acme~daily~${formatOccurrence(nine)}`);
    await squat(work, id);
    // And the cron's: `nightly~acme~<occurrence>` on the cron queue.
    const cronId = tenantCronJobId('nightly', 'acme', nine);
    await squat(app.get(TenantQueueRegistry).getQueue('tq-cron'), cronId);
    clock.set(nine + 200);
    await app.get(TenantScheduler).tick();
    await ran(id, 'acme');
    await ran(cronId, 'acme');
  });

  it("chunks: globex cannot take acme's chunk ids; acme's addChunked runs every chunk", async () => {
    await squat(work, 'imp-7~c0');
    await squat(work, 'imp-7~c2');
    const chunks = await tenant.run('acme', () =>
      addChunked(work, 'chunk', [1, 2, 3, 4, 5], { chunkSize: 2, jobIdPrefix: 'imp-7' }),
    );
    expect(chunks.map((chunk) => chunk.id)).toEqual(['imp-7~c0', 'imp-7~c1', 'imp-7~c2']);
    for (const chunk of chunks) await ran(chunk.id, 'acme');
  });
});
