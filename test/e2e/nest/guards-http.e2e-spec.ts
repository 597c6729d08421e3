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
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  InMemoryTenantDirectory,
  InjectTenantQueue,
  JobCancellations,
  JobCancelledEvent,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueRegistry,
  TenantQueueModule,
  TenantRequiredGuard,
  TenantWorkerHost,
  isTenantJobContext,
  parseCancelReason,
} from '../../../lib';
import { FlakyTenantDirectory } from '../../support/guard-fixtures';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

// jest ignores testTimeout inside a project config; 5 s is too short on a loaded CI.
jest.setTimeout(30_000);

const handled: { jobId: string; tenantId: string | undefined }[] = [];

/** A realistic app-wide API-key guard: checks HTTP requests, steps aside for tenant jobs. */
@Injectable()
class ApiKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (isTenantJobContext(context)) return true;
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string> }>();
    return req.headers['x-api-key'] === 'let-me-in';
  }
}

/** The same guard written without a thought for jobs. */
@Injectable()
class NaiveApiKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers?: Record<string, string> }>();
    return req.headers?.['x-api-key'] === 'let-me-in';
  }
}

@TenantProcessor('http-exports')
class ExportProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob) {
    handled.push({ jobId: job.id!, tenantId: this.tenant.tenantId });
  }
}

@Controller('exports')
@UseGuards(TenantRequiredGuard)
class ExportsController {
  constructor(@InjectTenantQueue('http-exports') private readonly queue: TenantQueue) {}

  @Post()
  start() {
    return this.queue.add('export', {});
  }
}

async function boot(
  globalGuard: new () => CanActivate,
  directory: FlakyTenantDirectory,
  globalEnhancers = true,
) {
  @Module({
    imports: [
      ...testRootImports(uniquePrefix('h'), {
        directory: { useValue: directory },
        globalEnhancers,
      }),
      TenantQueueModule.registerQueue({ name: 'http-exports' }),
    ],
    controllers: [ExportsController],
    providers: [ExportProcessor, { provide: APP_GUARD, useClass: globalGuard }],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('HTTP side: TenantRequiredGuard and an app-global guard', () => {
  const directory = new FlakyTenantDirectory(
    new InMemoryTenantDirectory([
      { id: 't-ok' },
      { id: 't-susp', status: 'suspended' },
      { id: 't-del', status: 'deleted' },
      { id: 't-flaky' },
    ]),
  );
  let app: INestApplication;

  beforeAll(async () => {
    handled.length = 0;
    app = await boot(ApiKeyGuard, directory);
  });

  afterAll(async () => {
    await app?.close();
  });

  const post = (tenant?: string, key = 'let-me-in') => {
    const req = request(app.getHttpServer()).post('/exports').set('x-api-key', key);
    return tenant ? req.set('x-tenant-id', tenant) : req;
  };

  it('refuses a request without a tenant (400) and tenants that are not active (403)', async () => {
    expect((await post()).status).toBe(400);
    const suspended = await post('t-susp');
    expect(suspended.status).toBe(403);
    expect(suspended.body.message).toMatch(/Tenant "t-susp" is suspended/);
    const deleted = await post('t-del');
    expect(deleted.status).toBe(403);
    expect(deleted.body.message).toMatch(/is deleted/);
    const unknown = await post('t-nobody');
    expect(unknown.status).toBe(403);
    expect(unknown.body.message).toMatch(/does not exist/);
  });

  it('answers 503, not 403, when the directory is down', async () => {
    directory.failNext('t-flaky', 1);
    expect((await post('t-flaky')).status).toBe(503);
  });

  it('keeps the global guard for HTTP, and it steps aside so jobs still run', async () => {
    expect((await post('t-ok', 'wrong-key')).status).toBe(403);
    const accepted = await post('t-ok');
    expect(accepted.status).toBe(201);
    await waitFor(() => handled.some((h) => h.jobId === accepted.body.id), 'the job to run');
    expect(handled).toEqual([{ jobId: accepted.body.id, tenantId: 't-ok' }]);
    // Nothing refused above reached the queue.
    const queue = app.get(TenantQueueRegistry).getQueue('http-exports').bullQueue;
    const counts = await queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed');
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(1);
  });
});

describe('a naive global HTTP guard on a job (globalEnhancers: true)', () => {
  let app: INestApplication;

  afterAll(async () => {
    await app?.close();
  });

  it('returns false there, so every job is cancelled with FORBIDDEN (use isTenantJobContext)', async () => {
    handled.length = 0;
    const directory = new FlakyTenantDirectory(new InMemoryTenantDirectory([{ id: 't-ok' }]));
    app = await boot(NaiveApiKeyGuard, directory);
    const cancelled: JobCancelledEvent[] = [];
    app.get(JobCancellations).onCancelled((event) => cancelled.push(event));
    const queue = app.get(TenantQueueRegistry).getQueue('http-exports');
    const job = await queue.addForTenant('t-ok', 'export', {});
    await waitFor(() => cancelled.length === 1, 'the job to be cancelled');
    const stored = await queue.bullQueue.getJob(job.id);
    expect(parseCancelReason(stored!.failedReason)).toBe('FORBIDDEN');
    expect(stored!.failedReason).toMatch(/isTenantJobContext/);
    expect(cancelled[0]).toMatchObject({ reason: 'FORBIDDEN', tenantId: 't-ok' });
    expect(handled).toEqual([]);
  });
});

describe('a naive global HTTP guard with the default globalEnhancers: false', () => {
  let app: INestApplication;

  afterAll(async () => {
    await app?.close();
  });

  it('never sees jobs, so they run; it still guards HTTP', async () => {
    handled.length = 0;
    const directory = new FlakyTenantDirectory(new InMemoryTenantDirectory([{ id: 't-ok' }]));
    app = await boot(NaiveApiKeyGuard, directory, false);
    const queue = app.get(TenantQueueRegistry).getQueue('http-exports');
    const job = await queue.addForTenant('t-ok', 'export', {});
    await waitFor(() => handled.some((h) => h.jobId === job.id), 'the job to run');
    expect(handled).toEqual([{ jobId: job.id, tenantId: 't-ok' }]);
    const refused = await request(app.getHttpServer()).post('/exports').set('x-tenant-id', 't-ok');
    expect(refused.status).toBe(403);
  });
});
