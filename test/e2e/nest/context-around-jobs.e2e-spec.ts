import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { AsyncResource } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { Job, QueueEvents } from 'bullmq';
import {
  InjectTenantQueue,
  MissingTenantError,
  OnTenantWorkerEvent,
  TenantContext,
  TenantEnvelope,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
  tenantLogFields,
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
const snapshots: string[][] = [];
/** The jobs BullMQ has recorded as completed (its `completed` event). */
const finished = new Set<string>();
/** What an @OnTenantWorkerEvent listener's log fields name: [job id, its tenant, the fields]. */
const eventLogs: [string, string | undefined, string][] = [];
const TENANTS = ['tenant-a', 'tenant-b', 'tenant-c'];

type Work = { kind: 'late' | 'emit' | 'hand-off' | 'noop'; other?: string };

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
      // Each of these runs once BullMQ has recorded the job's completion (a loaded machine may
      // stretch a job past any fixed delay); timers armed by timers keep the job's context.
      const afterJob = (fn: () => void) => {
        const check = () => (finished.has(jobId) ? fn() : setTimeout(check, 10));
        setTimeout(check, 10);
      };
      afterJob(() => {
        note('timeout');
        void addLate('timeout');
        try {
          this.tenant.getTenantIdOrThrow();
        } catch (error) {
          note('timeout:read', error as Error);
        }
      });
      const interval = setInterval(() => {
        if (!finished.has(jobId)) return;
        clearInterval(interval);
        note('interval');
        void addLate('interval');
      }, 10);
      void new Promise<void>((resolve) => afterJob(resolve)).then(() => {
        note('promise');
        return addLate('promise');
      });
      const stream = new PassThrough({ objectMode: true });
      stream.on('data', () => note('stream'));
      afterJob(() => stream.write('late'));
      // Listeners: an emitter calls them in the context of the code that emits.
      bus.once('emit', () => note('listener'));
      bus.once(
        'emit',
        AsyncResource.bind(() => note('bound-listener')),
      );
    } else if (job.data.kind === 'emit') {
      bus.emit('emit');
    } else if (job.data.kind === 'hand-off') {
      snapshots.push(Object.keys(this.tenant.snapshot() ?? {}));
      await this.tenant.run(job.data.other!, () =>
        this.kids.add('kid', { parent: jobId, where: 'run-other' }),
      );
    }
    await sleep(Math.random() * 10);
    return own;
  }

  @OnTenantWorkerEvent('completed')
  onCompleted(job: TenantJob<Work>) {
    eventLogs.push([job.id!, job.tenant?.tenantId, tenantLogFields()]);
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
    registry.getWorker('work')!.on('completed', (job: Job) => finished.add(job.id!));
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

  const done = async (ids: Map<string, string>) => {
    for (const id of ids.keys()) {
      await waitFor(
        async () => (await work.bullQueue.getJob(id))?.finishedOn !== undefined,
        `job ${id} to finish`,
        60_000,
      );
    }
  };

  it('code a job leaves running sees no tenant, and its add() is refused saying what to do', async () => {
    seen.length = 0;
    const ids = await enqueue(60, () => ({ kind: 'late' }));
    const lateKinds = ['timeout', 'interval', 'promise', 'stream'];
    await waitFor(
      () =>
        lateKinds.every((where) => seen.filter((s) => s.where === where).length === 60) &&
        seen.filter((s) => s.where.endsWith(':add')).length === 3 * 60,
      'every late callback and its add',
      60_000,
    );
    for (const where of lateKinds) {
      const records = seen.filter((s) => s.where === where);
      expect(new Set(records.map((s) => s.jobId))).toEqual(new Set(ids.keys()));
      expect(records.map((s) => s.tenantId)).toEqual(records.map(() => undefined));
    }
    for (const record of seen.filter((s) => s.where.endsWith(':add'))) {
      expect(record.error).toBeInstanceOf(MissingTenantError);
      expect(record.error!.message).toContain(
        `runs after the job that started it (${record.jobId}) ended`,
      );
      expect(record.error!.message).toContain('TenantQueue.addForTenant(tenantId, ...)');
    }
    const reads = seen.filter((s) => s.where === 'timeout:read');
    expect(reads).toHaveLength(60);
    for (const record of reads) {
      expect(record.error).toBeInstanceOf(MissingTenantError);
      expect(record.error!.message).toContain(
        `runs after the job that started it (${record.jobId}) ended`,
      );
    }
    // Nothing was enqueued from late code.
    expect(kids.filter((kid) => ids.has(kid.parent))).toEqual([]);

    // A listener runs in the context of the code that emits: another tenant's job, here. A
    // listener bound with AsyncResource.bind runs in the context of the job that registered it,
    // cleared once that job ended: never another tenant's.
    seen.length = 0;
    const emitters = await enqueue(6, () => ({ kind: 'emit' }));
    await done(emitters);
    await waitFor(
      () => seen.filter((s) => s.where === 'bound-listener').length === 60,
      'every listener',
    );
    const bound = seen.filter((s) => s.where === 'bound-listener');
    expect(bound.map((s) => s.tenantId)).toEqual(bound.map(() => undefined));
    const plain = seen.filter((s) => s.where === 'listener');
    expect(plain).toHaveLength(60);
    expect(plain.every((s) => TENANTS.includes(s.tenantId!))).toBe(true);
  });

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
        // Named by code, as addForTenant's: not inherited from the running job.
        strategy: 'system',
      });
      expect(kid.envelope?.actorId).toBeUndefined();
    }
    // The job's snapshot (for logs or a hand-off) holds its tenant, none of the runner's fields.
    expect(snapshots).toHaveLength(30);
    for (const keys of snapshots) {
      expect(keys).toEqual(expect.arrayContaining(['tenantId', 'actor', 'correlationId']));
      expect(keys).not.toEqual(expect.arrayContaining(['ended']));
      expect(keys).not.toEqual(expect.arrayContaining(['attempt']));
    }
  });

  it("runs BullMQ's and QueueEvents' listeners in no tenant context, @OnTenantWorkerEvent's in the job's", async () => {
    await waitFor(() => queueEventsSeen.length >= 60, 'queue events');
    expect(rawEvents.length).toBeGreaterThanOrEqual(60);
    expect(rawEvents.map((s) => s.tenantId)).toEqual(rawEvents.map(() => undefined));
    expect(rawEvents.every((s) => TENANTS.includes(s.own!))).toBe(true);
    expect(queueEventsSeen).toEqual(queueEventsSeen.map(() => undefined));
    // @OnTenantWorkerEvent listeners: the job's tenant, and the job named in their log lines.
    expect(eventLogs.length).toBeGreaterThanOrEqual(60);
    for (const [jobId, own, fields] of eventLogs) {
      expect(fields).toMatch(new RegExp(`^tenant=${own} job=${jobId} correlation=corr-\\d+$`));
    }
  });

  it('keeps them out of tenant contexts after the worker is resumed inside one', async () => {
    const worker = moduleRef.get(TenantQueueRegistry).getWorker('work')!;
    const after: Seen[] = [];
    const listener = (job: Job) =>
      after.push({
        jobId: job.id!,
        own: (job as TenantJob).tenant?.tenantId,
        where: 'worker.on(completed)',
        tenantId: tenant.tenantId,
      });
    worker.on('completed', listener);
    let ids = new Map<string, string>();
    try {
      await worker.pause();
      // BullMQ's resume() restarts the main loop in the caller's context: an admin route's.
      await tenant.run('tenant-z', () => worker.resume());
      ids = await enqueue(9, () => ({ kind: 'noop' }));
      // Only these 9: a child job an earlier test's work left may complete meanwhile too.
      await waitFor(
        () => after.filter((s) => ids.has(s.jobId)).length === 9,
        'the jobs after the resume',
      );
    } finally {
      worker.off('completed', listener);
    }
    const mine = after.filter((s) => ids.has(s.jobId));
    expect(mine.map((s) => s.own).sort()).toEqual([...TENANTS, ...TENANTS, ...TENANTS].sort());
    // Every completion the listener saw, those of earlier work included, in no tenant context.
    expect(after.map((s) => s.tenantId)).toEqual(after.map(() => undefined));
  });
});
