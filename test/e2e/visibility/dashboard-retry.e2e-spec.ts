import { CanActivate, ExecutionContext, INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DeadLetters,
  InMemoryTenantDirectory,
  JobCancelledError,
  NonRetryableError,
  TenantFairness,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueDashboardModule,
  TenantQueueModule,
  TenantWorkerHost,
  UseJobGuards,
} from '../../../lib';
import { FlakyTenantDirectory } from '../../support/guard-fixtures';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const runs = new Map<string, number>();
let failing = true;
const directory = new FlakyTenantDirectory(
  new InMemoryTenantDirectory([{ id: 'acme' }, { id: 'globex' }]),
);

/** Cancels the jobs that ask for it, as an entitlement or status check would. */
@Injectable()
class CancelGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const job = context.getArgByIndex(0) as TenantJob<{ cancel?: boolean }>;
    if (job.data.cancel) throw new JobCancelledError('NOT_ENTITLED', 'no such feature');
    return true;
  }
}

@TenantProcessor('exports', { concurrency: 2 })
@UseJobGuards(CancelGuard)
class ExportsProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    runs.set(job.id!, (runs.get(job.id!) ?? 0) + 1);
    if (failing) throw new NonRetryableError('the export service is down');
  }
}

/** Fails a job's first attempt for good; its retry (attempts made: 1) succeeds. */
@TenantProcessor('reports', { concurrency: 4 })
class ReportsProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    runs.set(job.id!, (runs.get(job.id!) ?? 0) + 1);
    if (job.attemptsMade === 0) throw new NonRetryableError('the report service is down');
  }
}

describe("the dashboard's Retry", () => {
  let app: INestApplication;
  let exportsQueue: TenantQueue;
  let api: string;
  const retry = (tenantId: string, jobId: string, queue = 'exports') =>
    fetch(`${api}/queues/${queue}/tenants/${tenantId}/jobs/${jobId}/retry`, {
      method: 'POST',
      headers: { 'x-tenant-queue-dashboard': '1' },
    }).then(async (res) => ({
      status: res.status,
      body: (await res.json()) as { message?: string; job?: { id: string } },
    }));

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('dretry'), {
          metrics: { sink: false },
          directory: { useValue: directory },
          guards: { portTimeoutMs: 300 },
        }),
        TenantQueueModule.registerQueue(
          { name: 'exports', attempts: 1, fairness: { defaultConcurrency: 1 } },
          { name: 'reports', attempts: 1 },
        ),
        TenantQueueDashboardModule.register({ allowUnauthenticated: true }),
      ],
      providers: [ExportsProcessor, ReportsProcessor, CancelGuard],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    api = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/admin/queues/api`;
    exportsQueue = app.get<TenantQueue>('TenantQueue:exports');
  });

  afterAll(async () => {
    await app?.close();
  });

  it('retries a failed job of a plain queue once, however often it is clicked at once', async () => {
    const reports = app.get<TenantQueue>('TenantQueue:reports');
    const ids = await Promise.all(
      Array.from({ length: 5 }, async () => (await reports.addForTenant('acme', 'r', {})).id),
    );
    await waitFor(
      async () => (await reports.bullQueue.getJobCounts('failed')).failed === ids.length,
      'the reports to fail',
    );
    // Five clicks at once on each: one retries it, the others find it no longer failed.
    const answers = await Promise.all(
      ids.flatMap((id) => Array.from({ length: 5 }, () => retry('acme', id, 'reports'))),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(ids.length);
    expect(statuses.filter((s) => s !== 200 && s !== 400)).toEqual([]);
    for (const answer of answers.filter((a) => a.status === 400)) {
      expect(answer.body.message).toMatch(/is (waiting|active|completed), not failed/);
    }
    await waitFor(
      async () => (await reports.bullQueue.getJobCounts('completed')).completed === ids.length,
      'the retries to complete',
    );
    expect(ids.map((id) => runs.get(id))).toEqual(ids.map(() => 2));
  });

  it("on a plain queue refuses to retry a suspended tenant's job (400, says why); BullMQ's own job.retry() of it is cancelled TENANT_SUSPENDED, never run", async () => {
    const reports = app.get<TenantQueue>('TenantQueue:reports');
    directory.inner.upsert({ id: 'initech' });
    const [a, b] = [
      (await reports.addForTenant('initech', 'r', {})).id!,
      (await reports.addForTenant('initech', 'r', {})).id!,
    ];
    await waitFor(
      async () =>
        (await reports.bullQueue.getJobState(a)) === 'failed' &&
        (await reports.bullQueue.getJobState(b)) === 'failed',
      "initech's reports to fail",
    );
    directory.inner.upsert({ id: 'initech', status: 'suspended' });

    const answer = await retry('initech', a, 'reports');
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('TENANT_SUSPENDED');
    expect(answer.body.message).toContain('Nothing was retried');
    expect(await reports.bullQueue.getJobState(a)).toBe('failed');

    // A retry outside the dashboard (BullMQ's job.retry(), bull-board): the worker's guard cancels it.
    await (await reports.bullQueue.getJob(b))!.retry('failed');
    await waitFor(
      async () =>
        ((await reports.bullQueue.getJob(b))?.failedReason ?? '').startsWith(
          '[cancelled:TENANT_SUSPENDED]',
        ),
      'the retried job to be cancelled',
    );
    expect([runs.get(a), runs.get(b)]).toEqual([1, 1]);
    // Its status unknown (the directory down): 503, nothing retried.
    directory.failNext('initech', 1);
    expect((await retry('initech', b, 'reports')).status).toBe(503);
    expect(await reports.bullQueue.getJobState(b)).toBe('failed');
  });

  it('on a fair queue refuses a cancelled job with a 400 that says why and what to do, enqueuing nothing', async () => {
    const { id } = await exportsQueue.addForTenant('acme', 'csv', { cancel: true });
    await waitFor(
      async () => (await exportsQueue.bullQueue.getJobState(id)) === 'failed',
      'the job to be cancelled',
    );
    const answer = await retry('acme', id);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('was cancelled (NOT_ENTITLED), not dead-lettered');
    expect(answer.body.message).toContain('enqueue the work again');
    expect(await exportsQueue.bullQueue.getJobState(id)).toBe('failed');
    expect(await exportsQueue.bullQueue.getJob(`${id}.r1`)).toBeUndefined();
    expect(runs.has(id)).toBe(false);
  });

  it('answers 503 while the tenant directory is down, replaying nothing', async () => {
    const { id } = await exportsQueue.addForTenant('acme', 'csv', {});
    const deadLetters = app.get(DeadLetters);
    await waitFor(async () => !!(await deadLetters.get('acme', id)), 'the dead letter');
    directory.failNext('acme', 1);
    const answer = await retry('acme', id);
    expect(answer.status).toBe(503);
    expect(answer.body.message).toContain(`dead letter "${id}" was not replayed`);
    expect(await deadLetters.get('acme', id)).toBeDefined();
    expect(await exportsQueue.bullQueue.getJob(`${id}.r1`)).toBeUndefined();
  });

  it("on a fair queue replays a failed job's dead letter once through the gate, however often it is clicked", async () => {
    const { id } = await exportsQueue.addForTenant('acme', 'csv', {});
    await waitFor(
      async () => (await exportsQueue.bullQueue.getJobState(id)) === 'failed',
      'the job to fail',
    );
    failing = false;
    expect((await retry('globex', id)).status).toBe(404);
    const answers = await Promise.all([retry('acme', id), retry('acme', id)]);
    expect(answers.map((a) => [a.status, a.body.job?.id])).toEqual([
      [200, `${id}.r1`],
      [200, `${id}.r1`],
    ]);
    await waitFor(
      async () => (await exportsQueue.bullQueue.getJobState(`${id}.r1`)) === 'completed',
      'the replay to complete',
    );
    const state = await app.get(TenantFairness).getTenant('exports', 'acme');
    expect([state.inFlight, state.backlog]).toEqual([0, 0]);
    expect(runs.get(`${id}.r1`)).toBe(1);
  });
});
