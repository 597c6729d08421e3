import { INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  TenantContext,
  TenantProcessor,
  TenantQueue,
  TenantQueueInspector,
  TenantQueueModule,
  TenantWorkerHost,
  UnknownTenantQueueError,
} from '../../../lib';
import { testRootImports } from '../../support/test-module';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

@TenantProcessor('orders', { concurrency: 2 })
class OrdersProcessor extends TenantWorkerHost {
  async process() {
    return 'ok';
  }
}

@Module({ providers: [OrdersProcessor] })
class WorkerModule {}

async function createApp(prefix: string, withWorker: boolean): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ...testRootImports(prefix),
      TenantQueueModule.registerQueue({ name: 'orders' }),
      TenantQueueModule.registerQueue({ name: 'audit', fairness: {} }),
      ...(withWorker ? [WorkerModule] : []),
    ],
  }).compile();
  return moduleRef.createNestApplication({ logger: false }).init();
}

describe('TenantQueueInspector: queues with producers but no consumer', () => {
  const prefix = uniquePrefix('noconsumer');
  let producer: INestApplication | undefined;
  let worker: INestApplication | undefined;

  afterAll(async () => {
    await worker?.close();
    await producer?.close();
  });

  it('says "no consumer" until a worker in another process consumes the queue', async () => {
    producer = await createApp(prefix, false);
    const inspector = producer.get(TenantQueueInspector);
    const queue = producer.get<TenantQueue>('TenantQueue:orders');
    await producer.get(TenantContext).run('acme', () => queue.add('o', { n: 1 }));

    const before = await inspector.getQueue('orders');
    expect(before).toMatchObject({
      queue: 'orders',
      poolOf: null,
      workers: 0,
      noConsumer: true,
      fair: false,
    });
    expect(before.counts.waiting).toBe(1);
    expect((await inspector.getQueue('audit')).fair).toBe(true);

    worker = await createApp(prefix, true);
    await waitFor(
      async () => (await queue.bullQueue.getCompletedCount()) === 1,
      'the job to run in the worker process',
    );
    const after = await inspector.getQueue('orders');
    expect(after).toMatchObject({ workers: 1, noConsumer: false });
    expect(after.counts).toMatchObject({ waiting: 0, completed: 1 });
    // audit still has no consumer anywhere (the worker process runs only orders).
    const all = await inspector.listQueues();
    expect(all.map((q) => [q.queue, q.noConsumer]).sort()).toEqual([
      ['audit', true],
      ['orders', false],
    ]);
    await expect(inspector.getQueue('nope')).rejects.toThrow(UnknownTenantQueueError);
  });
});
