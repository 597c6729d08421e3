import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Queue } from 'bullmq';
import {
  JobScope,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
  parseCancelReason,
  withRunOptions,
} from '../../../lib';
import { JobRunContext, TenantJobPipeline } from '../../../lib/core/processor/tenant-job-pipeline';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

// jest ignores testTimeout inside a project config; 5 s is too short on a loaded CI.
jest.setTimeout(60_000);

const ran: string[] = [];
const aborted: string[] = [];
const released: string[] = [];

/** `process(job)` only: BullMQ gives it no signal, so `worker.cancelJob` cannot abort it. */
@TenantProcessor('wp-plain')
class PlainProcessor extends TenantWorkerHost {
  constructor(
    private readonly tenant: TenantContext,
    private readonly scope: JobScope,
  ) {
    super();
  }

  async process(job: TenantJob<{ mode?: string; x?: number }>) {
    ran.push(job.id!);
    if (job.data.mode === 'slow') await sleep(1_500);
    if (job.data.mode === 'update') {
      await job.updateData({ x: 2 });
      return job.data;
    }
    if (job.data.mode === 'nested-scope') {
      // A child tenant context inside the job still belongs to the job's attempt.
      await this.tenant.run('other', async () => this.scope.defer(() => released.push(job.id!)));
    }
    return { tenant: this.tenant.tenantId, runId: job.runId };
  }
}

/** Declares the signal: BullMQ gives it one, and `worker.cancelJob` aborts it. */
@TenantProcessor('wp-signal')
class SignalProcessor extends TenantWorkerHost {
  async process(job: TenantJob, _token?: string, signal?: AbortSignal) {
    ran.push(job.id!);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 5_000);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        aborted.push(job.id!);
        resolve();
      });
    });
    return signal?.aborted ? 'aborted' : 'ran out';
  }
}

describe('the worker path', () => {
  let moduleRef: TestingModule;
  let plain: Queue;
  let signalled: Queue;
  const staged: JobRunContext[] = [];

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('wp')),
        TenantQueueModule.registerQueue({ name: 'wp-plain', attempts: 3 }),
        TenantQueueModule.registerQueue({ name: 'wp-signal' }),
      ],
      providers: [PlainProcessor, SignalProcessor],
    })
    class AppModule {}
    moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const pipeline = moduleRef.get(TenantJobPipeline);
    // A stage that applies only to the signal processor: never in the plain processor's list.
    pipeline.useStage(
      {
        appliesTo: (definition) => definition.name === 'wp-signal',
        run(context, next) {
          staged.push(context);
          return next();
        },
      },
      'dedupe',
    );
    await moduleRef.init();
    const registry = moduleRef.get(TenantQueueRegistry);
    plain = registry.getQueue('wp-plain').bullQueue;
    signalled = registry.getQueue('wp-signal').bullQueue;
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  const settle = (queue: Queue, jobId: string) =>
    waitFor(async () => {
      const state = await queue.getJobState(jobId);
      return state === 'completed' || state === 'failed';
    }, `job ${jobId} to finish`);
  const add = (name: string, data: Record<string, unknown>, queue = 'wp-plain') =>
    moduleRef
      .get(TenantContext)
      .run('acme', () => moduleRef.get(TenantQueueRegistry).getQueue(queue).add(name, data));

  it('refuses an impossible enqueuedAt as an invalid envelope, without a wasted attempt', async () => {
    const job = await plain.add(
      'work',
      {
        _tenant: {
          v: 1,
          tenantId: 'acme',
          actorType: 'system',
          // Matches the envelope's pattern, names no real instant.
          enqueuedAt: '2024-19-39T29:59:59Z',
          correlationId: 'corr-1',
        },
      },
      { attempts: 3 },
    );
    await settle(plain, job.id!);
    const stored = await plain.getJob(job.id!);
    expect(parseCancelReason(stored!.failedReason)).toBe('INVALID_ENVELOPE');
    expect(stored!.failedReason).toMatch(/enqueuedAt/);
    expect(stored!.attemptsMade).toBe(1);
    expect(await plain.getJobState(job.id!)).toBe('failed');
    expect(ran).not.toContain(job.id);
  });

  it('refuses malformed run options once, with the envelope already detached', async () => {
    const failed: TenantJob[] = [];
    const worker = moduleRef.get(PlainProcessor).worker;
    const listener = (job?: TenantJob) => job && failed.push(job);
    worker.on('failed', listener);
    const job = await plain.add(
      'work',
      {
        x: 1,
        _run: { timeoutMs: -1 },
        _tenant: {
          v: 1,
          tenantId: 'acme',
          actorType: 'system',
          enqueuedAt: new Date().toISOString(),
          correlationId: 'corr-2',
        },
      },
      { attempts: 3 },
    );
    await settle(plain, job.id!);
    // BullMQ emits 'failed' once its moveToFailed reply is back: after Redis shows the state.
    await waitFor(() => failed.some((f) => f.id === job.id), "the worker's failed event");
    worker.off('failed', listener);
    const stored = await plain.getJob(job.id!);
    expect(stored!.attemptsMade).toBe(1);
    expect(stored!.failedReason).toMatch(/timeoutMs/);
    expect(ran).not.toContain(job.id);
    const seen = failed.find((f) => f.id === job.id)!;
    expect(seen.data).toEqual({ x: 1 });
    expect(seen.tenant?.tenantId).toBe('acme');
  });

  it('gives no signal to a process() that does not declare it: cancelJob cannot abort it', async () => {
    const job = await add('work', { mode: 'slow' });
    const worker = moduleRef.get(PlainProcessor).worker;
    await waitFor(() => ran.includes(job.id), 'the slow job to start');
    expect(worker.cancelJob(job.id)).toBe(false);
    await settle(plain, job.id);
    expect(await plain.getJobState(job.id)).toBe('completed');
  });

  it('gives a signal to a process() that declares it: cancelJob aborts it', async () => {
    const job = await add('work', {}, 'wp-signal');
    const worker = moduleRef.get(SignalProcessor).worker;
    await waitFor(() => ran.includes(job.id), 'the job to start');
    expect(worker.cancelJob(job.id)).toBe(true);
    await settle(signalled, job.id);
    expect(aborted).toContain(job.id);
    expect((await signalled.getJob(job.id))!.returnvalue).toBe('aborted');
  });

  it('still puts a deadline on a job whose own run options carry one', async () => {
    const job = await add('work', withRunOptions({ mode: 'slow' }, { timeoutMs: 100 }));
    await waitFor(
      async () => (await plain.getJob(job.id))?.failedReason !== undefined,
      'the first attempt to time out',
    );
    expect((await plain.getJob(job.id))!.failedReason).toMatch(/TIMEOUT/);
  });

  it('keeps the envelope and the run options through updateData', async () => {
    const job = await add('work', withRunOptions({ mode: 'update' }, { runId: 'run-7' }));
    await settle(plain, job.id);
    const stored = await plain.getJob(job.id);
    expect(stored!.returnvalue).toEqual({ x: 2 });
    expect(stored!.data).toMatchObject({ x: 2, _run: { runId: 'run-7' } });
    expect(stored!.data._tenant.tenantId).toBe('acme');
  });

  it('keeps the job scope inside a child tenant context of the job', async () => {
    const job = await add('work', { mode: 'nested-scope' });
    await settle(plain, job.id);
    expect(await plain.getJobState(job.id)).toBe('completed');
    expect(released).toEqual([job.id]);
  });

  it('leaves a stage out of the processors it does not apply to', async () => {
    const before = staged.length;
    const job = await add('work', {});
    await settle(plain, job.id);
    expect(staged.length).toBe(before);
    expect(staged.every((context) => context.definition.name === 'wp-signal')).toBe(true);
    expect(staged.length).toBeGreaterThan(0);
  });
});
