import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import {
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
