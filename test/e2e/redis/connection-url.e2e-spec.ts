import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { ClsModule } from 'nestjs-cls';
import {
  InvalidTenantQueueOptionsError,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';
import { bootTestModule } from '../../support/test-module';

const ran: { queue: string; tenantId?: string }[] = [];

@TenantProcessor('plain-url')
class PlainProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }
  async process(_job: TenantJob) {
    ran.push({ queue: 'plain-url', tenantId: this.tenant.tenantId });
  }
}

@TenantProcessor('fair-url')
class FairProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }
  async process(_job: TenantJob) {
    ran.push({ queue: 'fair-url', tenantId: this.tenant.tenantId });
  }
}

// `connection: { url }` is a BullMQ ConnectionOptions form; every client of the module (BullMQ's,
// the producer's, the fair gate's) must follow the url, not ioredis's default localhost:6379.
describe('connection given as { url }', () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    @Module({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({
          connection: { url: process.env.REDIS_URL! },
          prefix: uniquePrefix('url'),
        }),
        TenantQueueModule.registerQueue({ name: 'plain-url' }),
        TenantQueueModule.registerQueue({ name: 'fair-url', fairness: { enabled: true } }),
      ],
      providers: [PlainProcessor, FairProcessor],
    })
    class AppModule {}
    moduleRef = await bootTestModule({ imports: [AppModule] });
  });

  afterAll(() => moduleRef.close());

  it('enqueues and runs on the Redis the url names, plain and fair', async () => {
    const registry = moduleRef.get(TenantQueueRegistry);
    const tenant = moduleRef.get(TenantContext);
    for (const name of ['plain-url', 'fair-url']) {
      const queue: TenantQueue = registry.getQueue(name);
      const { id } = await tenant.run('acme', () => queue.add('job', {}));
      await waitFor(() => ran.some((r) => r.queue === name), `${name} to run its job`, 20_000);
      // The handler has returned; BullMQ records the completion just after (a busy CI host saw
      // 'active' here).
      await waitFor(
        async () => (await queue.bullQueue.getJobState(id)) === 'completed',
        `${name}'s job completed`,
      );
    }
    expect(ran).toEqual([
      { queue: 'plain-url', tenantId: 'acme' },
      { queue: 'fair-url', tenantId: 'acme' },
    ]);
  });
});

@TenantProcessor('shape')
class ShapeProcessor extends TenantWorkerHost {
  async process() {}
}

// A `connection` that names no Redis server would make ioredis connect to 127.0.0.1:6379, and the
// app write its jobs to whatever runs there: the boot fails instead, saying what to write.
describe('a connection that names no Redis server, or an instance BullMQ workers refuse', () => {
  async function boot(connection: unknown, withWorker: boolean) {
    @Module({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({
          connection: connection as never,
          prefix: uniquePrefix('shape'),
        }),
        TenantQueueModule.registerQueue({ name: 'shape' }),
      ],
      providers: withWorker ? [ShapeProcessor] : [],
    })
    class AppModule {}
    return bootTestModule({ imports: [AppModule] });
  }

  it.each([
    [{ uri: process.env.REDIS_URL }, /names no Redis server \(keys: uri\)/],
    [process.env.REDIS_URL, /is a string; write \{ url:/],
    [{}, /names no Redis server \(an empty object\)/],
  ])('refuses %j at boot', async (connection, message) => {
    const boot$ = boot(connection, true);
    await expect(boot$).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(boot$).rejects.toThrow(message);
  });

  it('refuses an ioredis instance without maxRetriesPerRequest: null for a worker, and takes it for a producer', async () => {
    const client = new Redis(process.env.REDIS_URL!);
    try {
      await expect(boot(client, true)).rejects.toThrow(
        /"connection": the ioredis instance has maxRetriesPerRequest: 20, and BullMQ's workers need null/,
      );
      const producer = await boot(client, false);
      try {
        const queue = producer.get(TenantQueueRegistry).getQueue('shape');
        const { id } = await producer.get(TenantContext).run('acme', () => queue.add('job', {}));
        expect(await queue.bullQueue.getJobState(id)).toBe('waiting');
      } finally {
        await producer.close();
      }
    } finally {
      client.disconnect();
    }
  });
});

// BullMQ backs off to 20 s between reconnects of the connections it opens from options: after a
// 40 s outage the workers sat idle 18 s while producers wrote again. The module's strategy
// reconnects within 2 s, on every connection of the worker, unless the app set its own.
describe("a worker's connections reconnect within 2 s of Redis coming back", () => {
  async function workerClients(connection: object) {
    @Module({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({ connection, prefix: uniquePrefix('retry') }),
        TenantQueueModule.registerQueue({ name: 'shape' }),
      ],
      providers: [ShapeProcessor],
    })
    class AppModule {}
    const moduleRef = await bootTestModule({ imports: [AppModule] });
    const worker = moduleRef.get(TenantQueueRegistry).getWorker('shape')!;
    await worker.waitUntilReady();
    // The options BullMQ opens every connection of the worker from (its own default strategy
    // applies only where they set none: redis-connection.js, bullmq 5 and 6).
    const options = worker.opts.connection as { retryStrategy?: (attempt: number) => number };
    return { moduleRef, strategies: [options.retryStrategy!] };
  }

  it('uses the module strategy where the options set none, and the app strategy where they do', async () => {
    const url = process.env.REDIS_URL!;
    const plain = await workerClients({ url });
    try {
      for (const strategy of plain.strategies) expect(strategy(30)).toBeLessThanOrEqual(2000);
    } finally {
      await plain.moduleRef.close();
    }
    const own = await workerClients({ url, retryStrategy: () => 7777 });
    try {
      for (const strategy of own.strategies) expect(strategy(30)).toBe(7777);
    } finally {
      await own.moduleRef.close();
    }
  });
});
