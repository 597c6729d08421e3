import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Job, WaitingError, Worker } from 'bullmq';
import {
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { TenantBullMqModule } from '../../../lib/bullmq-compat';
import { BULLMQ_VERSION } from '../../../lib/core/bullmq';
import { uniquePrefix } from '../../support/redis-url';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

jest.setTimeout(90_000);

type Data = { then: 'rate-limit' | 'wait' };

/** When each attempt of a job started, and when its first attempt moved it back. */
const starts = new Map<string, number[]>();
const movedAt = new Map<string, number>();

/** One attempt of a job: put back (see PutBackProcessor) on the first, 'done' after. */
async function attempt(worker: Worker, job: Job<Data>, token?: string): Promise<string> {
  const attempts = starts.get(job.id!) ?? [];
  attempts.push(Date.now());
  starts.set(job.id!, attempts);
  if (attempts.length > 1) return 'done';
  await sleep(300);
  if (job.data.then === 'rate-limit') {
    await worker.rateLimit(50);
    movedAt.set(job.id!, Date.now());
    throw Worker.RateLimitError();
  }
  await job.moveToWait(token);
  movedAt.set(job.id!, Date.now());
  throw new WaitingError();
}

/**
 * Its first attempt lets the worker's other slots block waiting for a job (BullMQ's marker), then
 * puts its job back: `rate-limit` with `worker.rateLimit` and BullMQ's RateLimitError (the worker
 * moves it), `wait` with `job.moveToWait` and WaitingError. Its second attempt ends at once.
 * A drain delay of 30 s: a worker blocked on the marker that nothing wakes takes the job back 30 s
 * later (10 s while a delayed job waits), not at once.
 */
abstract class PutBackProcessor extends TenantWorkerHost {
  process(job: TenantJob<Data>, token?: string): Promise<string> {
    return attempt(this.worker, job, token);
  }
}

@TenantProcessor('pb-fair', { concurrency: 3, drainDelay: 30 })
class FairPutBack extends PutBackProcessor {}

@TenantProcessor('pb-plain', { concurrency: 3, drainDelay: 30 })
class PlainPutBack extends PutBackProcessor {}

/** A `@nestjs/bullmq` processor on a fair queue, adopted by `TenantBullMqModule`. */
@Processor('pb-adopted', { concurrency: 3, drainDelay: 30 })
class AdoptedPutBack extends WorkerHost {
  process(job: Job<Data>, token?: string): Promise<string> {
    return attempt(this.worker, job, token);
  }
}

/**
 * BullMQ puts a job with a priority back into `prioritized` without waking the workers blocked
 * waiting for one (`moveJobFromActiveToWait`, bullmq 5.81 and 6.7): after a RateLimitError they
 * took it only when their block timed out, 5-10 s later by default (30 s here: the `rate-limit`
 * cases fail so without the wake). Every job of a fair queue by turn has a priority, and on a
 * queue without fairness a job may be added with one. The module's workers wake them. After the
 * handler's own `moveToWait` the slot that ran it fetches again (BullMQ, WaitingError): the `wait`
 * cases hold with or without the wake, which serves the workers of other processes there.
 */
describe(`a job put back with a priority runs again at once (bullmq ${BULLMQ_VERSION})`, () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('pb')),
        TenantQueueModule.registerQueue({ name: 'pb-fair', fairness: {} }),
        TenantQueueModule.registerQueue({ name: 'pb-plain' }),
        TenantBullMqModule.registerQueue({ name: 'pb-adopted', fairness: {} }),
      ],
      providers: [FairPutBack, PlainPutBack, AdoptedPutBack],
    })
    class PutBackModule {}
    moduleRef = await bootTestModule({ imports: [PutBackModule] });
  });

  afterAll(() => moduleRef?.close());

  it.each([
    ['pb-fair', 'rate-limit', undefined],
    ['pb-fair', 'wait', undefined],
    ['pb-plain', 'rate-limit', 4],
    ['pb-plain', 'wait', 4],
    ['pb-adopted', 'rate-limit', undefined],
    ['pb-adopted', 'wait', undefined],
  ] as const)('%s, %s (priority %s)', async (queueName, then, priority) => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<Data>(queueName);
    const id = `${queueName}-${then}`;
    await moduleRef
      .get(TenantContext)
      .run('acme', () => queue.add('work', { then }, { jobId: id, priority }));
    await waitFor(() => (starts.get(id)?.length ?? 0) === 2, `${id} started again`, 40_000);
    const job = (await queue.bullQueue.getJob(id))!;
    // It had its priority (a fair queue's turn) when it was put back.
    expect(job.priority).toBeGreaterThan(0);
    await waitFor(async () => (await job.getState()) === 'completed', `${id} completed`);
    // Taken again by a woken worker, not by one whose 30 s block timed out (seconds under load).
    expect(starts.get(id)![1] - movedAt.get(id)!).toBeLessThan(8_000);
  });
});
