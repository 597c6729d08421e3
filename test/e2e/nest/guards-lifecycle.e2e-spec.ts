import { Injectable, Logger, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  InMemoryTenantDirectory,
  InjectTenantQueue,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantWorkerHost,
  parseCancelReason,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';
import { bootTestModule, testRootImports } from '../../support/test-module';

jest.setTimeout(30_000);

/**
 * A tenant suspended while its jobs are running, between two attempts, or held by the fair gate,
 * then reactivated (docs/guards.md): what runs, what is cancelled, and what stays cancelled.
 */
const attempts: string[] = [];
const held = new Map<string, () => void>();

type Data = { mode?: 'hold' | 'fail-once' };
let onFirstAttempt: (job: TenantJob<Data>) => Promise<void> = async () => undefined;

async function work(job: TenantJob<Data>) {
  attempts.push(job.id!);
  if (job.data.mode === 'hold') await new Promise<void>((release) => held.set(job.id!, release));
  if (job.data.mode === 'fail-once' && job.attemptsMade === 0) {
    // Suspended during the first attempt, so before the retry whatever the host's load.
    await onFirstAttempt(job);
    throw new Error('transient');
  }
}

@TenantProcessor('plain', { concurrency: 4 })
class PlainProcessor extends TenantWorkerHost {
  process(job: TenantJob<Data>) {
    return work(job);
  }
}

@TenantProcessor('fair', { concurrency: 4 })
class FairProcessor extends TenantWorkerHost {
  process(job: TenantJob<Data>) {
    return work(job);
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('plain') readonly plain: TenantQueue<Data>,
    @InjectTenantQueue('fair') readonly fair: TenantQueue<Data>,
  ) {}
}

describe('a tenant suspended while its jobs run, wait for a retry or wait in the gate', () => {
  const directory = new InMemoryTenantDirectory(
    ['run', 'retry', 'gate', 'other'].map((id) => ({ id })),
  );
  let moduleRef: TestingModule;
  let producer: Producer;

  beforeAll(async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('gl'), { directory: { useValue: directory } }),
        TenantQueueModule.registerQueue(
          {
            name: 'plain',
            defaultJobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 200 } },
          },
          { name: 'fair', fairness: { defaultConcurrency: 1 } },
        ),
      ],
      providers: [PlainProcessor, FairProcessor, Producer],
    })
    class App {}
    moduleRef = await bootTestModule({ imports: [App] });
    producer = moduleRef.get(Producer);
  });

  afterAll(async () => {
    for (const release of held.values()) release();
    await moduleRef?.close();
    jest.restoreAllMocks();
  });

  async function ended(queue: TenantQueue<Data>, id: string) {
    await waitFor(
      async () => ['completed', 'failed'].includes(await queue.bullQueue.getJobState(id)),
      `job ${id} to end`,
    );
    const job = (await queue.bullQueue.getJob(id))!;
    return {
      state: await job.getState(),
      reason: parseCancelReason(job.failedReason),
      attemptsMade: job.attemptsMade,
      ran: attempts.filter((ran) => ran === id).length,
    };
  }

  it('a running job finishes; the next job is cancelled; after reactivation it stays cancelled, new work runs, and a retry runs it', async () => {
    const { plain } = producer;
    const running = await plain.addForTenant('run', 'j', { mode: 'hold' });
    await waitFor(() => held.has(running.id), 'the job running');
    directory.setStatus('run', 'suspended');
    const next = await plain.addForTenant('run', 'j', {});
    expect(await ended(plain, next.id)).toEqual({
      state: 'failed',
      reason: 'TENANT_SUSPENDED',
      attemptsMade: 1,
      ran: 0,
    });
    held.get(running.id)!();
    expect(await ended(plain, running.id)).toMatchObject({ state: 'completed', ran: 1 });

    directory.setStatus('run', 'active');
    const fresh = await plain.addForTenant('run', 'j', {});
    expect(await ended(plain, fresh.id)).toMatchObject({ state: 'completed', ran: 1 });
    expect(await ended(plain, next.id)).toMatchObject({ state: 'failed', ran: 0 });
    await (await plain.bullQueue.getJob(next.id))!.retry('failed');
    await waitFor(
      async () => (await plain.bullQueue.getJobState(next.id)) === 'completed',
      'retry',
    );
    expect(attempts.filter((ran) => ran === next.id)).toHaveLength(1);
  });

  it('a job waiting for its retry is cancelled at its next attempt, never run again', async () => {
    const { plain } = producer;
    onFirstAttempt = async () => directory.setStatus('retry', 'suspended');
    const job = await plain.addForTenant('retry', 'j', { mode: 'fail-once' });
    expect(await ended(plain, job.id)).toEqual({
      state: 'failed',
      reason: 'TENANT_SUSPENDED',
      attemptsMade: 2, // the failed attempt, then the refused one: the third never comes
      ran: 1,
    });
  });

  it('jobs held by the fair gate are cancelled as they are admitted; another tenant runs', async () => {
    const { fair } = producer;
    const first = await fair.addForTenant('gate', 'j', { mode: 'hold' });
    const waiting = [];
    for (let i = 0; i < 3; i++) waiting.push(await fair.addForTenant('gate', 'j', {}));
    const other = await fair.addForTenant('other', 'j', {});
    await waitFor(() => held.has(first.id), 'the first job running');
    directory.setStatus('gate', 'suspended');
    held.get(first.id)!();
    expect(await ended(fair, first.id)).toMatchObject({ state: 'completed', ran: 1 });
    for (const job of waiting) {
      expect(await ended(fair, job.id)).toEqual({
        state: 'failed',
        reason: 'TENANT_SUSPENDED',
        attemptsMade: 1,
        ran: 0,
      });
    }
    expect(await ended(fair, other.id)).toMatchObject({ state: 'completed', ran: 1 });
  });
});
