import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Job, Queue } from 'bullmq';
import {
  InMemoryTenantDirectory,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueInspector,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { BULLMQ_VERSION } from '../../../lib/core/bullmq';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

/** Jobs held in the processor until the test lets them finish. */
const running = new Map<string, () => void>();

@TenantProcessor('stated', { concurrency: 4 })
class HeldProcessor extends TenantWorkerHost {
  process(job: TenantJob<{ n: number }>): Promise<string> {
    return new Promise((resolve) => running.set(job.id!, () => resolve(`done ${job.data.n}`)));
  }
}

/** BullMQ's own view of a job: `Job.fromId` + `getState`, 'absent' when BullMQ has no such job. */
async function stateOf(queue: Queue, id: string): Promise<string> {
  const job = await Job.fromId(queue, id);
  return job ? job.getState() : 'absent';
}

/**
 * The fair gate's admission and hand-over as BullMQ's own clients see them (what bull-board, a
 * `QueueEvents` listener or an ops script reads): run on both BullMQ majors (`test:bullmq5`).
 */
describe(`fair queue seen through BullMQ's API (bullmq ${BULLMQ_VERSION})`, () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('state'), {
          directory: { useValue: new InMemoryTenantDirectory([{ id: 'acme', maxConcurrency: 1 }]) },
        }),
        TenantQueueModule.registerQueue({ name: 'stated', fairness: {} }),
      ],
      providers: [HeldProcessor],
    })
    class StateModule {}
    moduleRef = await Test.createTestingModule({ imports: [StateModule] }).compile();
    await moduleRef.init();
  });

  afterAll(async () => {
    for (const finish of running.values()) finish();
    await moduleRef?.close();
  });

  it('admits one job at the cap, holds the next, then hands it over: states and counts agree', async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('stated');
    const bull = queue.bullQueue;
    await moduleRef.get(TenantContext).run('acme', () =>
      queue.addBulk([
        { name: 'work', data: { n: 1 }, opts: { jobId: 'first' } },
        { name: 'work', data: { n: 2 }, opts: { jobId: 'second' } },
      ]),
    );

    await waitFor(() => running.has('first'), 'first job running');
    expect(await stateOf(bull, 'first')).toBe('active');
    const first = await Job.fromId(bull, 'first');
    expect(first!.data).toMatchObject({ n: 1, _tenant: { tenantId: 'acme' } });
    // acme's cap is 1: the second job is held, whatever holding state the gate uses.
    await sleep(300);
    expect(running.has('second')).toBe(false);
    expect(await stateOf(bull, 'second')).not.toBe('active');
    expect(await bull.getJobCounts('active')).toEqual({ active: 1 });

    running.get('first')!();
    await waitFor(async () => (await stateOf(bull, 'first')) === 'completed', 'first completed');
    expect((await Job.fromId(bull, 'first'))!.returnvalue).toBe('done 1');
    await waitFor(() => running.has('second'), 'second job handed over');
    expect(await stateOf(bull, 'second')).toBe('active');

    running.get('second')!();
    await waitFor(async () => (await stateOf(bull, 'second')) === 'completed', 'second completed');
    // (bullmq 5 adds `paused` to a count of `waiting`: its paused queues keep their jobs there.)
    expect(
      await bull.getJobCounts('active', 'waiting', 'delayed', 'completed', 'failed'),
    ).toMatchObject({
      active: 0,
      waiting: 0,
      delayed: 0,
      completed: 2,
      failed: 0,
    });
  });

  it("counts a paused BullMQ queue's admitted jobs as waiting (bullmq 5 moves them to `paused`)", async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>('stated');
    const bull = queue.bullQueue;
    await bull.pause();
    try {
      await moduleRef
        .get(TenantContext)
        .run('acme', () => queue.add('work', { n: 3 }, { jobId: 'third' }));
      await waitFor(async () => (await stateOf(bull, 'third')) === 'waiting', 'third admitted');
      const summary = await moduleRef.get(TenantQueueInspector).getQueue('stated');
      expect(summary.counts).toMatchObject({ waiting: 1, active: 0 });
    } finally {
      await bull.resume();
    }
    await waitFor(() => running.has('third'), 'third running after resume');
    running.get('third')!();
    await waitFor(async () => (await stateOf(bull, 'third')) === 'completed', 'third completed');
  });
});
