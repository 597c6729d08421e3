import {
  CallHandler,
  CanActivate,
  ConsoleLogger,
  Controller,
  ExecutionContext,
  Get,
  INestApplication,
  Inject,
  Injectable,
  Module,
  NestInterceptor,
  Scope,
  UseInterceptors,
} from '@nestjs/common';
import { map } from 'rxjs';
import { ContextIdFactory, REQUEST } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  InjectTenantQueue,
  JobScope,
  JobScopeUnavailableError,
  OnTenantWorkerEvent,
  TenantContext,
  TenantContextIdStrategy,
  TenantJob,
  TenantJobRequest,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantRequestPayload,
  TenantWorkerHost,
  UseJobGuards,
  withRunOptions,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

/** Everything the providers saw, reset per test. */
const log = {
  clients: [] as { serial: number; tenantId: string | undefined }[],
  durableHosts: 0,
  perJob: [] as { jobId: string | undefined; tenantId: string | undefined }[],
  seen: [] as Record<string, unknown>[],
  events: [] as string[],
  errors: [] as string[],
};

/** Keeps the module's error lines (disposer failures) for the assertions. */
class CapturingLogger extends ConsoleLogger {
  override error(message: unknown): void {
    log.errors.push(String(message));
  }
  override log(): void {}
  override warn(): void {}
  override debug(): void {}
  override verbose(): void {}
}

let serial = 0;

/** A per-tenant client: durable, so built once per tenant and shared by requests and jobs. */
@Injectable({ scope: Scope.REQUEST, durable: true })
class TenantClient {
  readonly serial = ++serial;
  readonly tenantId: string | undefined;

  constructor(@Inject(REQUEST) payload: TenantRequestPayload) {
    this.tenantId = payload.tenantId;
    log.clients.push({ serial: this.serial, tenantId: this.tenantId });
  }
}

/** Request-scoped, not durable: one per job. */
@Injectable({ scope: Scope.REQUEST })
class JobWorkspace {
  constructor(@Inject(REQUEST) readonly request: TenantJobRequest) {
    log.perJob.push({ jobId: request.job?.id, tenantId: request.tenantId });
  }
}

/** Depends only on a durable provider, so Nest makes the processor itself durable (per tenant). */
@TenantProcessor('durable', { concurrency: 8 })
class DurableProcessor extends TenantWorkerHost {
  constructor(
    private readonly client: TenantClient,
    private readonly tenant: TenantContext,
  ) {
    super();
    log.durableHosts++;
  }

  async process(job: TenantJob<{ i: number }>) {
    const before = this.tenant.tenantId;
    await sleep(Math.random() * 5);
    log.seen.push({
      queue: 'durable',
      jobTenant: job.tenant?.tenantId,
      before,
      after: this.tenant.tenantId,
      client: this.client.tenantId,
      serial: this.client.serial,
      worker: this.worker.name,
    });
    return { serial: this.client.serial };
  }
}

/** Depends on a per-job provider, so it is resolved per job; the durable client still per tenant. */
@TenantProcessor('per-job', { concurrency: 4 })
class PerJobProcessor extends TenantWorkerHost {
  constructor(
    private readonly workspace: JobWorkspace,
    private readonly client: TenantClient,
    private readonly tenant: TenantContext,
  ) {
    super();
  }

  async process(job: TenantJob<{ i: number }>) {
    const before = this.tenant.tenantId;
    await sleep(Math.random() * 5);
    log.seen.push({
      queue: 'per-job',
      jobId: job.id,
      jobTenant: job.tenant?.tenantId,
      before,
      after: this.tenant.tenantId,
      client: this.client.tenantId,
      serial: this.client.serial,
      requestTenant: this.workspace.request.tenantId,
      requestJob: this.workspace.request.job.id,
    });
    return 'ok';
  }

  @OnTenantWorkerEvent('completed')
  completed(job: TenantJob) {
    log.events.push(`completed:${job.id}:${this.tenant.tenantId}:${this.client.tenantId}`);
  }
}

/** A request-scoped guard and an interceptor on a scoped processor: Nest's enhancers still run. */
@Injectable()
class WrapResult implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler) {
    return next.handle().pipe(map((value) => ({ wrapped: value })));
  }
}

@Injectable({ scope: Scope.REQUEST })
class RequestTenantGuard implements CanActivate {
  constructor(@Inject(REQUEST) private readonly request: TenantJobRequest) {}

  canActivate(context: ExecutionContext): boolean {
    const job = context.getArgByIndex<TenantJob>(0);
    return context.getType<string>() === 'tenant-job' && this.request.job === job;
  }
}

@TenantProcessor('enhanced', { concurrency: 2 })
@UseInterceptors(WrapResult)
@UseJobGuards(RequestTenantGuard)
class EnhancedProcessor extends TenantWorkerHost {
  constructor(private readonly workspace: JobWorkspace) {
    super();
  }

  async process(job: TenantJob) {
    return `${job.id}:${this.workspace.request.tenantId}`;
  }

  @OnTenantWorkerEvent('completed')
  completed(job: TenantJob, result: unknown) {
    log.events.push(JSON.stringify({ id: job.id, result }));
  }
}

let flakyBuilds = 0;

/** Fails its first construction: Nest must not keep the failure for the tenant. */
@Injectable({ scope: Scope.REQUEST, durable: true })
class FlakyClient {
  readonly build = ++flakyBuilds;

  constructor(@Inject(REQUEST) readonly payload: TenantRequestPayload) {
    if (this.build === 1) throw new Error(`client for ${payload.tenantId} unavailable`);
  }
}

@TenantProcessor('flaky')
class FlakyProcessor extends TenantWorkerHost {
  constructor(private readonly client: FlakyClient) {
    super();
  }

  async process() {
    return this.client.build;
  }

  @OnTenantWorkerEvent('failed')
  failed(job: TenantJob) {
    log.events.push(`failed:${job.attemptsMade}:${job.failedReason}`);
  }

  @OnTenantWorkerEvent('completed')
  completed(job: TenantJob, result: unknown) {
    log.events.push(`completed:${job.attemptsMade}:${result}`);
  }
}

type ScopeMode = 'ok' | 'throw' | 'timeout';

/** A singleton processor using JobScope for temp resources. */
@TenantProcessor('scoped', { concurrency: 2, timeoutMs: 300 })
class ScopeProcessor extends TenantWorkerHost {
  constructor(private readonly scope: JobScope) {
    super();
  }

  async process(
    job: TenantJob<{ mode: ScopeMode; disposerThrows?: boolean }>,
    _t?: string,
    signal?: AbortSignal,
  ) {
    const note = (what: string): void => void log.events.push(`${job.id}:${what}`);
    this.scope.defer(() => note('dispose-1'));
    this.scope.use({ [Symbol.asyncDispose]: async () => note('dispose-2') });
    this.scope.use({ [Symbol.dispose]: () => note('dispose-3') });
    if (job.data.disposerThrows) {
      this.scope.defer(() => {
        throw new Error('disposer boom');
      });
    }
    this.scope.use({ path: '/tmp/x' }, () => note('dispose-5'));
    note('handler');
    if (job.data.mode === 'throw') throw new Error('handler boom');
    if (job.data.mode === 'timeout') {
      await new Promise((resolve) => signal?.addEventListener('abort', resolve));
      await sleep(50);
      note('handler-after-abort');
    }
    return 'done';
  }

  @OnTenantWorkerEvent('completed')
  completed(job: TenantJob) {
    log.events.push(`${job.id}:completed`);
  }

  @OnTenantWorkerEvent('failed')
  failed(job: TenantJob) {
    log.events.push(`${job.id}:failed:${job.failedReason}`);
  }
}

@Controller('client')
class ClientController {
  constructor(private readonly client: TenantClient) {}

  @Get()
  get() {
    return { serial: this.client.serial, tenantId: this.client.tenantId };
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('durable') readonly durable: TenantQueue,
    @InjectTenantQueue('per-job') readonly perJob: TenantQueue,
    @InjectTenantQueue('scoped') readonly scoped: TenantQueue,
    @InjectTenantQueue('enhanced') readonly enhanced: TenantQueue,
    @InjectTenantQueue('flaky') readonly flaky: TenantQueue,
  ) {}
}

describe('per-tenant providers in workers', () => {
  let app: INestApplication;
  let producer: Producer;
  const strategy = new TenantContextIdStrategy();

  beforeAll(async () => {
    ContextIdFactory.apply(strategy);
    @Module({
      imports: [
        ...testRootImports(uniquePrefix(), {}, { middleware: { mount: true } }),
        TenantQueueModule.registerQueue(
          { name: 'durable', systemJobs: ['system'], attempts: 1 },
          { name: 'per-job', attempts: 1 },
          { name: 'scoped', attempts: 1 },
          { name: 'enhanced', attempts: 1 },
          { name: 'flaky', attempts: 2 },
        ),
      ],
      controllers: [ClientController],
      providers: [
        TenantClient,
        JobWorkspace,
        DurableProcessor,
        PerJobProcessor,
        ScopeProcessor,
        EnhancedProcessor,
        WrapResult,
        RequestTenantGuard,
        FlakyClient,
        FlakyProcessor,
        Producer,
      ],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: new CapturingLogger() });
    await app.init();
    producer = app.get(Producer);
  });

  afterAll(async () => {
    await app?.close();
    ContextIdFactory.apply(undefined as never);
  });

  beforeEach(() => {
    log.clients = [];
    log.durableHosts = 0;
    log.perJob = [];
    log.seen = [];
    log.events = [];
    log.errors = [];
  });

  it('builds a durable provider once per tenant across 100 interleaved jobs of 3 tenants', async () => {
    const tenants = ['t-a', 't-b', 't-c'];
    for (let i = 0; i < 100; i++) {
      await producer.durable.addForTenant(tenants[i % 3], 'work', { i });
    }
    await waitFor(() => log.seen.length === 100, '100 durable jobs');
    expect(log.clients.map((c) => c.tenantId).sort()).toEqual(tenants);
    expect(log.durableHosts).toBe(3);
    const serialOf = new Map(log.clients.map((c) => [c.tenantId, c.serial]));
    for (const seen of log.seen) {
      expect(seen.client).toBe(seen.jobTenant);
      expect(seen.before).toBe(seen.jobTenant);
      expect(seen.after).toBe(seen.jobTenant);
      expect(seen.serial).toBe(serialOf.get(seen.jobTenant as string));
      expect(seen.worker).toEqual(expect.any(String));
    }
    expect(strategy.size).toBeGreaterThanOrEqual(3);
  });

  it('builds a request-scoped provider per job, with the job and its tenant as REQUEST, no leaks', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const job = await producer.perJob.addForTenant(i % 2 ? 'leak-a' : 'leak-b', 'work', { i });
      ids.push(job.id);
    }
    await waitFor(() => log.seen.length === 20, '20 per-job jobs');
    expect(log.perJob.map((p) => p.jobId).sort()).toEqual([...ids].sort());
    for (const seen of log.seen) {
      expect(seen.requestJob).toBe(seen.jobId);
      for (const key of ['before', 'after', 'client', 'requestTenant']) {
        expect([key, seen[key]]).toEqual([key, seen.jobTenant]);
      }
    }
    // Per job, but the durable client is still one per tenant.
    expect(log.clients.map((c) => c.tenantId).sort()).toEqual(['leak-a', 'leak-b']);
    // Worker events of a scoped processor run on the instance that ran the job.
    await waitFor(() => log.events.length === 20, '20 completed events');
    for (const event of log.events) expect(event).toMatch(/^completed:[^:]+:(leak-[ab]):\1$/);
  });

  it('gives a system job without a tenant its own instance, shared with no tenant', async () => {
    await producer.durable.addForTenant('t-sys', 'work', { i: 0 });
    await producer.durable.add('system', { i: 1 });
    await producer.durable.add('system', { i: 2 });
    await waitFor(() => log.seen.length === 3, '3 jobs');
    const untenanted = log.seen.filter((s) => s.jobTenant === undefined);
    expect(untenanted).toHaveLength(2);
    for (const seen of untenanted) expect(seen.client).toBeUndefined();
    expect(new Set(untenanted.map((s) => s.serial)).size).toBe(2);
  });

  it('shares the durable instance between an HTTP request and the jobs of the same tenant', async () => {
    const server = app.getHttpServer();
    const first = await request(server).get('/client').set('x-tenant-id', 'http-x').expect(200);
    expect(first.body.tenantId).toBe('http-x');
    await producer.durable.addForTenant('http-x', 'work', { i: 0 });
    await producer.durable.addForTenant('http-y', 'work', { i: 1 });
    await waitFor(() => log.seen.length === 2, '2 jobs');
    const x = log.seen.find((s) => s.jobTenant === 'http-x')!;
    expect(x.serial).toBe(first.body.serial);
    const y = log.seen.find((s) => s.jobTenant === 'http-y')!;
    const again = await request(server).get('/client').set('x-tenant-id', 'http-y').expect(200);
    expect(again.body).toEqual({ serial: y.serial, tenantId: 'http-y' });
    expect(log.clients.map((c) => c.tenantId).sort()).toEqual(['http-x', 'http-y']);
    // A request without a tenant gets an instance of its own, every time.
    const a = await request(server).get('/client').expect(200);
    const b = await request(server).get('/client').expect(200);
    expect(a.body.tenantId).toBeUndefined();
    expect(a.body.serial).not.toBe(b.body.serial);
  });

  const disposals = (jobId: string) =>
    log.events.filter((e) => e.startsWith(`${jobId}:`)).map((e) => e.slice(jobId.length + 1));

  it('releases JobScope resources last-first after a job succeeds, before it is recorded', async () => {
    const job = await producer.scoped.addForTenant('s-a', 'work', { mode: 'ok' });
    await waitFor(() => disposals(job.id).includes('completed'), 'completed');
    expect(disposals(job.id)).toEqual([
      'handler',
      'dispose-5',
      'dispose-3',
      'dispose-2',
      'dispose-1',
      'completed',
    ]);
  });

  it("releases them after a throw, and a disposer's error does not replace the job's", async () => {
    const job = await producer.scoped.addForTenant('s-b', 'work', {
      mode: 'throw',
      disposerThrows: true,
    });
    await waitFor(() => disposals(job.id).some((e) => e.startsWith('failed:')), 'failed');
    expect(disposals(job.id)).toEqual([
      'handler',
      'dispose-5',
      'dispose-3',
      'dispose-2',
      'dispose-1',
      'failed:handler boom',
    ]);
    const line = log.errors.find((e) => e.includes('disposer boom'));
    expect(line).toContain(`tenant=s-b job=${job.id}`);
  });

  it('releases them when the attempt times out, without waiting for the handler', async () => {
    const job = await producer.scoped.addForTenant(
      's-c',
      'work',
      withRunOptions({ mode: 'timeout' as ScopeMode }, { timeoutMs: 100 }),
    );
    await waitFor(() => disposals(job.id).includes('handler-after-abort'), 'the handler to end');
    const events = disposals(job.id);
    expect(events.slice(0, 5)).toEqual([
      'handler',
      'dispose-5',
      'dispose-3',
      'dispose-2',
      'dispose-1',
    ]);
    const failed = events.find((e) => e.startsWith('failed:'));
    expect(failed).toMatch(/^failed:\[TIMEOUT\] /);
    expect(events.indexOf(failed!)).toBeGreaterThan(4);
    expect(events.indexOf('dispose-1')).toBeLessThan(events.indexOf('handler-after-abort'));
  });

  it("runs a scoped processor's guards and interceptors in the job's DI context", async () => {
    const job = await producer.enhanced.addForTenant('e-a', 'work', {});
    await waitFor(() => log.events.length === 1, 'the enhanced job');
    expect(JSON.parse(log.events[0])).toEqual({
      id: job.id,
      result: { wrapped: `${job.id}:e-a` },
    });
  });

  it("retries a job whose tenant's durable provider failed to build, and builds it again", async () => {
    await producer.flaky.addForTenant('f-a', 'work', {});
    await waitFor(() => log.events.some((e) => e.startsWith('completed:')), 'the retry');
    expect(log.events.filter((e) => e.startsWith('completed:'))).toEqual(['completed:2:2']);
    expect(log.events).toContain('failed:1:client for f-a unavailable');
    // Built again once (for the failed event's listener or the retry, whichever came first).
    expect(flakyBuilds).toBe(2);
  });

  it('refuses JobScope outside a job with a typed error that says what to do', () => {
    const scope = app.get(JobScope);
    expect(scope.active).toBe(false);
    expect(() => scope.defer(() => undefined)).toThrow(JobScopeUnavailableError);
    const tenant = app.get(TenantContext);
    tenant.run('t-a', () => {
      expect(() => scope.use({ [Symbol.dispose]: () => undefined })).toThrow(
        /outside a job.*try\/finally/s,
      );
    });
  });

  it('rebuilds a tenant evicted past maxTenants, and only then', async () => {
    ContextIdFactory.apply(new TenantContextIdStrategy({ maxTenants: 1 }));
    try {
      for (const [i, tenantId] of ['ev-a', 'ev-a', 'ev-b', 'ev-a'].entries()) {
        await producer.durable.addForTenant(tenantId, 'work', { i });
        await waitFor(() => log.seen.length === i + 1, `job ${i}`);
      }
    } finally {
      ContextIdFactory.apply(strategy);
    }
    expect(log.clients.map((c) => c.tenantId)).toEqual(['ev-a', 'ev-b', 'ev-a']);
    for (const seen of log.seen) expect(seen.client).toBe(seen.jobTenant);
  });

  it('keeps the strategy bounded: the least recently used tenant is dropped past maxTenants', () => {
    const small = new TenantContextIdStrategy({ maxTenants: 2 });
    const durable = { token: 'x', isTreeDurable: true };
    const idOf = (tenantId: string) =>
      small
        .attach(ContextIdFactory.create(), new TenantJobRequest(tenantId, {} as TenantJob))
        .resolve(durable);
    const a = idOf('a');
    const b = idOf('b');
    expect(idOf('a')).toBe(a);
    idOf('c');
    expect(small.size).toBe(2);
    expect(idOf('a')).toBe(a);
    expect(idOf('b')).not.toBe(b);
    expect(() => new TenantContextIdStrategy({ maxTenants: 0 })).toThrow(/positive integer/);
  });
});
