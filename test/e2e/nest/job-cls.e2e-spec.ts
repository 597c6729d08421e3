import { Injectable, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  CLS_ID,
  ClsInitContext,
  ClsModule,
  ClsModuleOptions,
  ClsPluginBase,
  ClsService,
  InjectableProxy,
} from 'nestjs-cls';
import {
  InjectTenantQueue,
  OnTenantWorkerEvent,
  TenantContext,
  TenantJob,
  TenantJobClsInitContext,
  TenantJobClsOptions,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { JobClsSetup } from '../../../lib/core/cls/job-cls-setup';
import { TenantJobPipeline } from '../../../lib/core/processor/tenant-job-pipeline';
import { uniquePrefix } from '../../support/redis-url';
import { testConnection } from '../../support/test-redis';
import { waitFor } from '../../support/wait';
import { bootTestModule } from '../../support/test-module';

/** A request-scoped proxy provider: built once per CLS context, from what that context holds. */
let built = 0;
@InjectableProxy()
class RequestUser {
  readonly tenantId: string | undefined;
  readonly clsId: string | undefined;
  readonly setupSaw: unknown;
  readonly instance = ++built;

  constructor(tenant: TenantContext, cls: ClsService) {
    this.tenantId = tenant.tenantId;
    this.clsId = cls.getId();
    this.setupSaw = cls.get('setup');
  }
}

/** A CLS plugin whose hooks record the context kind and the order they ran in. */
class AuditPlugin extends ClsPluginBase {
  constructor() {
    super('audit');
    this.registerHooks({
      useFactory: () => ({
        beforeSetup: (cls: ClsService, context: ClsInitContext) => {
          const { kind, type, job } = context as TenantJobClsInitContext;
          cls.set('before', `${kind}/${type}/${job.id}`);
          cls.set('idAtBefore', cls.getId() ?? null);
        },
        afterSetup: (cls: ClsService) => {
          cls.set('after', `after:${cls.get('setup')}`);
        },
      }),
    });
  }
}

interface Seen {
  where: 'process' | 'completed';
  jobId: string;
  clsId: unknown;
  tenantId?: string;
  user?: Partial<RequestUser> | 'not ready';
  before?: unknown;
  idAtBefore?: unknown;
  setup?: unknown;
  after?: unknown;
}

const seen: Seen[] = [];

@TenantProcessor('cls-q', { concurrency: 4 })
class Recorder extends TenantWorkerHost {
  constructor(
    private readonly user: RequestUser,
    private readonly cls: ClsService,
    private readonly tenant: TenantContext,
  ) {
    super();
  }

  private note(where: Seen['where'], job: TenantJob): void {
    let user: Seen['user'];
    try {
      user = {
        tenantId: this.user.tenantId,
        clsId: this.user.clsId,
        setupSaw: this.user.setupSaw,
        instance: this.user.instance,
      };
    } catch {
      user = 'not ready';
    }
    seen.push({
      where,
      jobId: job.id!,
      clsId: this.cls.get(CLS_ID),
      tenantId: this.tenant.tenantId,
      user,
      before: this.cls.get('before'),
      idAtBefore: this.cls.get('idAtBefore'),
      setup: this.cls.get('setup'),
      after: this.cls.get('after'),
    });
  }

  async process(job: TenantJob): Promise<void> {
    this.note('process', job);
  }

  @OnTenantWorkerEvent('completed')
  onCompleted(job: TenantJob): void {
    this.note('completed', job);
  }
}

/** Only CLS_ID and the tenant: for the setups with no proxy provider. */
@TenantProcessor('cls-q', { concurrency: 4 })
class PlainRecorder extends TenantWorkerHost {
  constructor(
    private readonly cls: ClsService,
    private readonly tenant: TenantContext,
  ) {
    super();
  }

  async process(job: TenantJob): Promise<void> {
    seen.push({
      where: 'process',
      jobId: job.id!,
      clsId: this.cls.get(CLS_ID),
      tenantId: this.tenant.tenantId,
      setup: this.cls.get('setup'),
    });
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('cls-q') readonly queue: TenantQueue<{ n: number }>,
    readonly tenant: TenantContext,
    readonly registry: TenantQueueRegistry,
  ) {}

  add(tenantId: string, correlationId: string, n: number) {
    return this.tenant.run({ tenantId, correlationId, actor: { type: 'system' } }, () =>
      this.queue.add('work', { n }),
    );
  }
}

async function boot(input: {
  clsRoot?: ClsModuleOptions;
  cls?: TenantJobClsOptions;
  processor: typeof Recorder | typeof PlainRecorder;
}): Promise<TestingModule> {
  @Module({
    imports: [
      // Without forRoot, the app still imports ClsModule for ClsService (as the module does).
      input.clsRoot ? ClsModule.forRoot(input.clsRoot) : ClsModule,
      TenantQueueModule.forRoot({
        connection: testConnection(),
        prefix: uniquePrefix(),
        ...(input.cls ? { cls: input.cls } : {}),
      }),
      TenantQueueModule.registerQueue({ name: 'cls-q', systemJobs: ['system'], attempts: 1 }),
    ],
    providers: [input.processor, Producer],
  })
  class AppModule {}
  const moduleRef = await bootTestModule({ imports: [AppModule] });
  return moduleRef;
}

const setup = (cls: ClsService, job: TenantJob) =>
  cls.set('setup', `setup:${job.name}:${job.tenant?.tenantId ?? '-'}`);

describe('nestjs-cls in jobs: setup, plugin hooks, CLS_ID and proxy providers, as @UseCls', () => {
  let moduleRef: TestingModule;
  let producer: Producer;

  beforeAll(async () => {
    seen.length = 0;
    moduleRef = await boot({
      clsRoot: { global: true, proxyProviders: [RequestUser], plugins: [new AuditPlugin()] },
      cls: { setup },
      processor: Recorder,
    });
    producer = moduleRef.get(Producer);
  });

  afterAll(async () => {
    await moduleRef.close();
  });

  it('runs them in each job and each @OnTenantWorkerEvent listener, in its own tenant', async () => {
    const a = await producer.add('tenant-a', 'corr-a', 1);
    const b = await producer.add('tenant-b', 'corr-b', 2);
    const bull = producer.registry.getQueue('cls-q').bullQueue;
    const system = await bull.add('system', { n: 3 }, { jobId: 'sys-1' });
    await waitFor(() => seen.filter((s) => s.where === 'completed').length === 3, '3 events');

    const expected = [
      { job: a.id, tenant: 'tenant-a', id: 'corr-a', setup: 'setup:work:tenant-a' },
      { job: b.id, tenant: 'tenant-b', id: 'corr-b', setup: 'setup:work:tenant-b' },
      { job: system.id!, tenant: undefined, id: 'sys-1', setup: 'setup:system:-' },
    ];
    const instances = new Set<number | undefined>();
    for (const { job, tenant, id, setup: setupValue } of expected) {
      for (const where of ['process', 'completed'] as const) {
        const record = seen.find((s) => s.jobId === job && s.where === where)!;
        expect(record).toMatchObject({
          clsId: id,
          tenantId: tenant,
          before: `custom/tenant-job/${job}`,
          // beforeSetup runs before CLS_ID is set, as in @UseCls
          idAtBefore: null,
          setup: setupValue,
          after: `after:${setupValue}`,
          user: { tenantId: tenant, clsId: id, setupSaw: setupValue },
        });
        instances.add((record.user as RequestUser).instance);
      }
    }
    // One proxy instance per CLS context: 3 jobs and 3 events.
    expect(instances.size).toBe(6);
  });
});

describe('nestjs-cls in jobs: only what the app configured', () => {
  let moduleRef: TestingModule | undefined;

  beforeEach(() => {
    seen.length = 0;
  });

  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  async function runOne(): Promise<Seen> {
    const producer = moduleRef!.get(Producer);
    const job = await producer.add('tenant-a', 'corr-1', 1);
    await waitFor(() => seen.some((s) => s.jobId === job.id), 'the job');
    return seen.find((s) => s.jobId === job.id)!;
  }

  // The stages the processor's worker runs per job (a stage that cannot act is left out at start).
  const hasStage = () => {
    const definition = moduleRef!.get(TenantQueueRegistry).getQueue('cls-q').definition;
    const host = moduleRef!.get(PlainRecorder);
    return moduleRef!
      .get(TenantJobPipeline, { strict: false })
      .stagesFor(definition, { concurrency: 4 }, host)
      .some((stage) => stage instanceof JobClsSetup);
  };

  it('adds nothing per job with no setup, plugin, proxy provider or id', async () => {
    moduleRef = await boot({ clsRoot: { global: true }, processor: PlainRecorder });
    expect(hasStage()).toBe(false);
    expect(await runOne()).toMatchObject({ tenantId: 'tenant-a', clsId: undefined });
  });

  it("sets CLS_ID when the app's ClsModule generates ids for requests", async () => {
    moduleRef = await boot({
      clsRoot: { global: true, middleware: { generateId: true } },
      processor: PlainRecorder,
    });
    expect(hasStage()).toBe(true);
    expect(await runOne()).toMatchObject({ tenantId: 'tenant-a', clsId: 'corr-1' });
  });

  it('runs the setup and CLS_ID when the app never called ClsModule.forRoot', async () => {
    moduleRef = await boot({
      cls: { setup, idGenerator: (job) => `job-${job.id}` },
      processor: PlainRecorder,
    });
    const record = await runOne();
    expect(record).toMatchObject({
      tenantId: 'tenant-a',
      clsId: `job-${record.jobId}`,
      setup: 'setup:work:tenant-a',
    });
  });
});
