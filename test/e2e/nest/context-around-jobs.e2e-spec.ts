import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { AsyncResource } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { Job, QueueEvents } from 'bullmq';
import {
  InjectTenantQueue,
  TenantContext,
  TenantEnvelope,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { redisConnection, uniquePrefix } from '../../support/redis-url';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

/** What one piece of code saw: the job that started it, where it ran, the tenant it read. */
interface Seen {
  jobId: string;
  own: string | undefined;
  where: string;
  tenantId: string | undefined;
  error?: Error;
}

const seen: Seen[] = [];
const kids: { where: string; parent: string; envelope: TenantEnvelope | undefined }[] = [];
const bus = new EventEmitter().setMaxListeners(0);
const TENANTS = ['tenant-a', 'tenant-b', 'tenant-c'];

type Work = { kind: 'late' | 'emit' | 'hand-off'; other?: string };

@TenantProcessor('work', { concurrency: 20 })
class WorkProcessor extends TenantWorkerHost {
  constructor(
    private readonly tenant: TenantContext,
    @InjectTenantQueue('kids')
    private readonly kids: TenantQueue<{ parent: string; where: string }>,
  ) {
    super();
  }

  async process(job: TenantJob<Work>) {
    const own = job.tenant?.tenantId;
    const jobId = job.id!;
    const note = (where: string, error?: Error) =>
      seen.push({ jobId, own, where, tenantId: this.tenant.tenantId, error });
    const addLate = (where: string) =>
      this.kids.add('kid', { parent: jobId, where }).then(
        () => note(`${where}:add`),
        (error: Error) => note(`${where}:add`, error),
      );
    if (job.data.kind === 'late') {
      // Each of these runs after process() returned.
      setTimeout(() => {
        note('timeout');
        void addLate('timeout');
      }, 40);
      let ticks = 0;
      const interval = setInterval(() => {
        if (++ticks < 8) return;
        clearInterval(interval);
        note('interval');
        void addLate('interval');
      }, 10);
      void sleep(50).then(() => {
        note('promise');
        return addLate('promise');
      });
      const stream = new PassThrough({ objectMode: true });
      stream.on('data', () => note('stream'));
      setTimeout(() => stream.write('late'), 45);
      // Listeners: an emitter calls them in the context of the code that emits.
      bus.once('emit', () => note('listener'));
      bus.once(
        'emit',
        AsyncResource.bind(() => note('bound-listener')),
      );
    } else if (job.data.kind === 'emit') {
      bus.emit('emit');
    } else {
      await this.tenant.run(job.data.other!, () =>
        this.kids.add('kid', { parent: jobId, where: 'run-other' }),
      );
    }
    await sleep(Math.random() * 10);
    return own;
  }
}

@TenantProcessor('kids', { concurrency: 20 })
class KidsProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ parent: string; where: string }>) {
    kids.push({ where: job.data.where, parent: job.data.parent, envelope: job.tenant });
  }
}

describe('tenant context inside and around jobs (concurrency 20, three tenants)', () => {
  let moduleRef: TestingModule;
  let tenant: TenantContext;
  let work: TenantQueue<Work>;
  let queueEvents: QueueEvents;
  const rawEvents: Seen[] = [];
  const queueEventsSeen: (string | undefined)[] = [];

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix()),
        TenantQueueModule.registerQueue({ name: 'work', attempts: 1 }),
        TenantQueueModule.registerQueue({ name: 'kids', attempts: 1 }),
      ],
      providers: [WorkProcessor, KidsProcessor],
    })
    class AppModule {}
    moduleRef = await bootTestModule({ imports: [AppModule] });
    tenant = moduleRef.get(TenantContext);
    const registry = moduleRef.get(TenantQueueRegistry);
    work = registry.getQueue('work') as TenantQueue<Work>;
    registry.getWorker('work')!.on('completed', (job: Job) =>
      rawEvents.push({
        jobId: job.id!,
        own: (job as TenantJob).tenant?.tenantId,
        where: 'worker.on(completed)',
        tenantId: tenant.tenantId,
      }),
    );
    queueEvents = new QueueEvents('work', {
      connection: redisConnection(),
      prefix: work.definition.bullPrefix,
    });
    queueEvents.on('completed', () => queueEventsSeen.push(tenant.tenantId));
    await queueEvents.waitUntilReady();
  });

  afterAll(async () => {
    await queueEvents?.close();
    await moduleRef?.close();
  });

  /** Enqueues `count` jobs of `kind`, tenants interleaved, each with its own actor and correlation. */
  async function enqueue(count: number, kind: (i: number) => Work) {
    const ids = new Map<string, string>();
    for (let i = 0; i < count; i++) {
      const tenantId = TENANTS[i % TENANTS.length];
      const job = await tenant.run(
        { tenantId, actor: { type: 'user', id: `user-${i}` }, correlationId: `corr-${i}` },
        () => work.add('work', kind(i)),
      );
      ids.set(job.id, tenantId);
    }
    return ids;
  }

  it("TenantContext.run(other) in a job hands off with actor system and the job's correlation id", async () => {
    kids.length = 0;
    const ids = await enqueue(30, (i) => ({
      kind: 'hand-off',
      other: TENANTS[(i + 1) % TENANTS.length],
    }));
    await waitFor(() => kids.length === 30, 'every hand-off job', 60_000);
    const parents = new Map<string, number>();
    [...ids.keys()].forEach((id, i) => parents.set(id, i));
    for (const kid of kids) {
      const i = parents.get(kid.parent)!;
      expect(kid.envelope).toMatchObject({
        tenantId: TENANTS[(i + 1) % TENANTS.length],
        actorType: 'system',
        correlationId: `corr-${i}`,
      });
      expect(kid.envelope?.actorId).toBeUndefined();
    }
  });
});
