import { InjectQueue } from '@nestjs/bullmq';
import {
  CanActivate,
  Controller,
  ExecutionContext,
  INestApplication,
  Injectable,
  Module,
  Post,
  UseGuards,
} from '@nestjs/common';
import type { Queue } from 'bullmq';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import request from 'supertest';
import {
  InjectTenantQueue,
  InMemoryTenantDirectory,
  InvalidLaneError,
  InvalidScheduleError,
  InvalidTenantQueueOptionsError,
  JobCancellations,
  JobCancelledEvent,
  JobIdTakenError,
  MissingTenantError,
  OnTenantWorkerEvent,
  TenantContext,
  TenantCron,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueTesting,
  TenantQueueTestingModule,
  TenantRequiredGuard,
  TenantWorkerHost,
  UseJobGuards,
  parseCancelReason,
} from '../../../lib';
import { TenantBullMqModule } from '../../../lib/bullmq-compat';

const events: string[] = [];

@TenantProcessor('reports')
class ReportProcessor extends TenantWorkerHost {
  constructor(
    private readonly tenant: TenantContext,
    @InjectTenantQueue('emails') private readonly emails: TenantQueue,
  ) {
    super();
  }

  async process(job: TenantJob<{ month: string; fail?: boolean }>) {
    if (job.data.fail) throw new Error('report engine down');
    await this.emails.add('report-ready', { month: job.data.month });
    return `${this.tenant.tenantId}:${job.data.month}`;
  }

  @OnTenantWorkerEvent('failed')
  onFailed(job: TenantJob) {
    events.push(`failed:${this.tenant.tenantId}:${job.id}`);
  }
}

@Injectable()
class OpenGuard implements CanActivate {
  canActivate(context: ExecutionContext) {
    return context.getArgByIndex<TenantJob<{ open?: boolean }>>(0).data.open === true;
  }
}

@UseJobGuards(OpenGuard)
@TenantProcessor('vetted')
class VettedProcessor extends TenantWorkerHost {
  async process() {
    return 'ran';
  }
}

@Controller('reports')
class ReportsController {
  constructor(@InjectTenantQueue('reports') private readonly reports: TenantQueue) {}

  @Post()
  @UseGuards(TenantRequiredGuard)
  create() {
    return this.reports.add('monthly', { month: '2026-11' });
  }
}

/** What a user's own test looks like: no Redis, real tenant semantics. */
describe('TenantQueueTestingModule', () => {
  let app: INestApplication;
  let testing: TenantQueueTesting;

  beforeAll(async () => {
    @Module({
      imports: [
        ClsModule.forRoot({ global: true, middleware: { mount: true } }),
        TenantQueueTestingModule.forRoot(),
        TenantQueueModule.registerQueue(
          { name: 'reports' },
          { name: 'vetted' },
          {
            name: 'emails',
            fairness: { lanes: { interactive: { share: 0.5 }, bulk: { share: 0.5 } } },
          },
        ),
      ],
      controllers: [ReportsController],
      providers: [ReportProcessor, VettedProcessor, OpenGuard],
    })
    class AppUnderTest {}
    const moduleRef = await Test.createTestingModule({ imports: [AppUnderTest] }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
    testing = app.get(TenantQueueTesting);
  });

  afterAll(() => app.close());

  it('records HTTP-enqueued jobs with their tenant and runs them inline in that tenant', async () => {
    await request(app.getHttpServer()).post('/reports').set('x-tenant-id', 'acme').expect(201);
    await testing.drain();
    const [report] = testing.jobs('reports');
    expect(report).toMatchObject({
      name: 'monthly',
      data: { month: '2026-11' },
      tenant: { tenantId: 'acme', strategy: 'header' },
      state: 'completed',
      result: 'acme:2026-11',
    });
    expect(testing.jobs('emails')).toEqual([
      expect.objectContaining({
        name: 'report-ready',
        tenant: expect.objectContaining({ tenantId: 'acme', strategy: 'inherited' }),
      }),
    ]);
  });

  it('keeps producer rules: no tenant, no job', async () => {
    const reports = app.get<TenantQueue>('TenantQueue:reports');
    await expect(reports.add('monthly', { month: 'x' })).rejects.toBeInstanceOf(MissingTenantError);
    await request(app.getHttpServer()).post('/reports').expect(400);
  });

  it("checks a job's lane against the queue, as in production", async () => {
    const context = app.get(TenantContext);
    const emails = app.get<TenantQueue>('TenantQueue:emails');
    await context.run('acme', () => emails.add('digest', {}, { lane: 'bulk' }));
    await expect(
      context.run('acme', () => emails.add('digest', {}, { lane: 'nope' })),
    ).rejects.toThrow(InvalidLaneError);
    await expect(
      context.run('acme', () =>
        app.get<TenantQueue>('TenantQueue:reports').add('monthly', {}, { lane: 'bulk' }),
      ),
    ).rejects.toThrow(/declares no lanes/);
  });

  it('reports failures and runs failed events in the job tenant', async () => {
    testing.clear();
    const reports = app.get<TenantQueue>('TenantQueue:reports');
    const tenant = app.get(TenantContext);
    const job = await tenant.run('globex', () =>
      reports.add('monthly', { month: '2026-10', fail: true }),
    );
    await testing.drain();
    expect(testing.jobs('reports')[0]).toMatchObject({
      state: 'failed',
      failedReason: 'report engine down',
    });
    expect(events).toContain(`failed:globex:${job.id}`);
    expect(() => reports.bullQueue.getJob('x')).toThrow(
      /not available in TenantQueueTestingModule/,
    );
  });

  it("keeps job ids as production does: a repeat is one job, another tenant's id is refused", async () => {
    testing.clear();
    const reports = app.get<TenantQueue>('TenantQueue:reports');
    const opts = { jobId: 'acme-report-08' };
    await reports.addForTenant('acme', 'monthly', { month: '2026-08' }, opts);
    await reports.addForTenant('acme', 'monthly', { month: '2026-08' }, opts);
    await expect(
      reports.addForTenant('globex', 'monthly', { month: '2026-08' }, opts),
    ).rejects.toBeInstanceOf(JobIdTakenError);
    // All or none: the bulk's own new id is not written (nor kept) when one id is refused.
    await expect(
      app.get(TenantContext).run('globex', () =>
        reports.addBulk([
          { name: 'monthly', data: { month: '2026-07' }, opts: { jobId: 'globex-07' } },
          { name: 'monthly', data: { month: '2026-08' }, opts },
        ]),
      ),
    ).rejects.toBeInstanceOf(JobIdTakenError);
    await testing.drain();
    expect(testing.jobs('reports').map((job) => [job.id, job.tenant?.tenantId, job.state])).toEqual(
      [['acme-report-08', 'acme', 'completed']],
    );
    expect(testing.jobs('emails')).toHaveLength(1);
    await reports.addForTenant('globex', 'monthly', { month: '2026-07' }, { jobId: 'globex-07' });
    // clear() forgets the jobs and their ids, as a fresh Redis would.
    testing.clear();
    await reports.addForTenant('initech', 'monthly', { month: '2026-08' }, opts);
    await testing.drain();
    expect(testing.jobs('reports')).toMatchObject([{ id: 'acme-report-08', state: 'completed' }]);
  });

  it('tells JobCancellations listeners of a cancelled job, in its tenant, as in production', async () => {
    const cancelled: JobCancelledEvent[] = [];
    const tenants: (string | undefined)[] = [];
    const stop = app.get(JobCancellations).onCancelled((event) => {
      cancelled.push(event);
      tenants.push(app.get(TenantContext).tenantId);
    });
    const vetted = app.get<TenantQueue>('TenantQueue:vetted');
    const job = await vetted.addForTenant('acme', 'check', { open: false });
    await vetted.addForTenant('acme', 'check', { open: true });
    await testing.drain();
    stop();
    expect(testing.jobs('vetted').map((j) => j.state)).toEqual(['failed', 'completed']);
    expect(cancelled).toEqual([
      expect.objectContaining({
        reason: 'FORBIDDEN',
        queueName: 'vetted',
        jobId: job.id,
        tenantId: 'acme',
      }),
    ]);
    expect(tenants).toEqual(['acme']);
  });

  it("applies the runner's envelope checks to system work too", async () => {
    testing.clear();
    const reports = app.get<TenantQueue>('TenantQueue:reports');
    await reports.addForTenant('initech', 'monthly', { month: '2026-09' });
    await testing.drain();
    const [job] = testing.jobs('reports');
    expect(job).toMatchObject({
      state: 'completed',
      tenant: { tenantId: 'initech', actorType: 'system' },
    });
    expect(parseCancelReason(job.failedReason)).toBeUndefined();
  });
});

describe('TenantQueueTestingModule with @nestjs/bullmq processors (TenantBullMqModule)', () => {
  it("compiles a module that injects a bridged queue's token; reading it says to use TenantQueueTesting", async () => {
    @Injectable()
    class LegacyProducer {
      constructor(@InjectQueue('legacy') readonly queue: Queue) {}
    }
    const producer = await Test.createTestingModule({
      imports: [
        TenantQueueTestingModule.forRoot(),
        TenantBullMqModule.registerQueue({ name: 'legacy' }),
      ],
      providers: [LegacyProducer],
    }).compile();
    // Nest awaited the token's value: the in-memory queue is no thenable, and names itself.
    expect(producer.get(LegacyProducer).queue.name).toBe('legacy');
    expect(() => producer.get(LegacyProducer).queue.getJobCounts()).toThrow(
      /not available in TenantQueueTestingModule; read jobs from TenantQueueTesting\.jobs\(\)/,
    );
    await producer.close();
  });
});

describe('TenantQueueTestingModule refuses the options the real module refuses, those of the features it leaves out too', () => {
  it.each([
    [{ scheduler: { tickInterval: -1 } }, {}, '"scheduler.tickInterval"'],
    [{ scheduler: { enabled: 'yes' } }, {}, '"scheduler.enabled"'],
    [{ metrics: { bogus: 1 } }, {}, '"metrics.bogus"'],
    [{}, { deadLetterCap: 0 }, '"registerQueue(q).deadLetterCap"'],
  ])('forRoot(%j), registerQueue(%j): %s', async (root, queue, field) => {
    const compiling = Test.createTestingModule({
      imports: [
        TenantQueueTestingModule.forRoot(root as object),
        TenantQueueModule.registerQueue({ name: 'q', ...queue }),
      ],
    }).compile();
    await expect(compiling).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(compiling).rejects.toThrow(field);
  });

  it.each([
    ['99 * * * *', 'UTC', 'digest', 'Invalid cron expression "99 * * * *"'],
    ['0 9 * * *', 'Mars/Olympus', 'digest', 'Unknown time zone "Mars/Olympus"'],
    ['0 9 * * *', 'UTC', 'a:b', '"@TenantCron.name"'],
  ])(
    '@TenantCron(%p, %p) named %p: the same InvalidScheduleError at init',
    async (expression, timezone, name, message) => {
      @Injectable()
      class DigestService {
        @TenantCron(expression, { name, timezone })
        async nightly() {}
      }
      const moduleRef = await Test.createTestingModule({
        imports: [
          TenantQueueTestingModule.forRoot({
            directory: { useValue: new InMemoryTenantDirectory() },
          }),
        ],
        providers: [DigestService],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      const refused = app.init();
      await expect(refused).rejects.toThrow(InvalidScheduleError);
      await expect(refused).rejects.toThrow(message);
      await app.close();
    },
  );

  it('@TenantCron without a TenantDirectory: the same refusal at init', async () => {
    @Injectable()
    class DigestService {
      @TenantCron('0 9 * * *', { name: 'digest', timezone: 'UTC' })
      async nightly() {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [TenantQueueTestingModule.forRoot()],
      providers: [DigestService],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await expect(app.init()).rejects.toThrow(InvalidTenantQueueOptionsError);
    await app.close();
  });

  it('@TenantProcessor options BullMQ refuses (concurrency 0): the same typed error at init', async () => {
    @TenantProcessor('q', { concurrency: 0 })
    class IdleProcessor extends TenantWorkerHost {
      async process() {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [TenantQueueTestingModule.forRoot(), TenantQueueModule.registerQueue({ name: 'q' })],
      providers: [IdleProcessor],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    const refused = app.init();
    await expect(refused).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(refused).rejects.toThrow(
      "@TenantProcessor('q') on IdleProcessor: concurrency 0 is not an integer >= 1.",
    );
    await app.close();
  });
});
