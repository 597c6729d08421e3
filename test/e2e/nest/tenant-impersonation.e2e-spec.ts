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
  InjectTenantQueue,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantRequiredGuard,
  TenantWorkerHost,
  isTenantJobContext,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(30_000);

const handled: { jobId: string; tenantId: string | undefined }[] = [];
const audited: (string | undefined)[] = [];

/** Stands in for passport's JWT guard: `Bearer <user>@<tenant>` becomes `req.user`. */
@Injectable()
class JwtGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest();
    const match = /^Bearer (\w+)@([\w-]+)$/.exec(req.headers.authorization ?? '');
    if (!match) return false;
    req.user = { sub: match[1], tenantId: match[2] };
    return true;
  }
}

/** A global audit/throttle guard that reads the tenant before any route's auth guard ran. */
@Injectable()
class AuditGuard implements CanActivate {
  constructor(private readonly tenant: TenantContext) {}

  canActivate(context: ExecutionContext): boolean {
    if (isTenantJobContext(context)) return true;
    audited.push(this.tenant.tenantId);
    return true;
  }
}

@TenantProcessor('imp-jobs')
class Recorder extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob) {
    handled.push({ jobId: job.id!, tenantId: this.tenant.tenantId });
  }
}

@Controller()
class JobsController {
  constructor(
    @InjectTenantQueue('imp-jobs') private readonly queue: TenantQueue,
    private readonly tenant: TenantContext,
  ) {}

  private async enqueue() {
    const job = await this.queue.add('work', {});
    return {
      id: job.id,
      tenantId: this.tenant.tenantId,
      strategy: this.tenant.snapshot()?.strategy,
    };
  }

  @Post('audited')
  @UseGuards(JwtGuard)
  audited() {
    return this.enqueue();
  }

  @Post('required-first')
  @UseGuards(TenantRequiredGuard, JwtGuard)
  requiredFirst() {
    return this.enqueue();
  }

  @Post('public')
  open() {
    return this.enqueue();
  }
}

describe("resolution order ['jwtClaim', 'header']: the header cannot impersonate", () => {
  let app: INestApplication;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('imp'), {
          resolution: { order: ['jwtClaim', 'header'], jwtClaim: 'tenantId' },
        }),
        TenantQueueModule.registerQueue({ name: 'imp-jobs' }),
      ],
      controllers: [JobsController],
      providers: [Recorder, { provide: APP_GUARD, useClass: AuditGuard }],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  const post = (path: string, auth?: string, header?: string) => {
    let req = request(app.getHttpServer()).post(path);
    if (auth) req = req.set('authorization', `Bearer ${auth}`);
    if (header) req = req.set('x-tenant-id', header);
    return req;
  };

  async function jobCount(): Promise<number> {
    const queue = app.get(TenantQueueRegistry).getQueue('imp-jobs').bullQueue;
    const counts = await queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  it('a global guard read the header first; the claim still decides, and a mismatch is 403', async () => {
    audited.length = 0;
    const res = await post('/audited', 'alice@acme', 'globex');
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(
      /JWT claim "tenantId" names tenant "acme" but the header "x-tenant-id" names "globex"/,
    );
    // The audit guard ran before auth and saw the header's (provisional) answer.
    expect(audited).toEqual(['globex']);
    expect(await jobCount()).toBe(0);
  });

  it('@UseGuards(TenantRequiredGuard, JwtGuard): an acme user sending x-tenant-id: globex is 403', async () => {
    const res = await post('/required-first', 'alice@acme', 'globex');
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/names tenant "acme" but the header .* names "globex"/);
    expect(await jobCount()).toBe(0);
  });

  it('the same requests with a matching or no header enqueue as the claim tenant', async () => {
    handled.length = 0;
    const a = await post('/audited', 'alice@acme', 'acme');
    const b = await post('/audited', 'alice@acme');
    const c = await post('/required-first', 'bob@globex', 'globex');
    for (const res of [a, b, c]) expect(res.status).toBe(201);
    expect([a, b, c].map((r) => [r.body.tenantId, r.body.strategy])).toEqual([
      ['acme', 'jwtClaim'],
      ['acme', 'jwtClaim'],
      ['globex', 'jwtClaim'],
    ]);
    await waitFor(() => handled.length === 3, 'three jobs to run');
    const byId = new Map(handled.map((h) => [h.jobId, h.tenantId]));
    expect([a, b, c].map((r) => byId.get(r.body.id))).toEqual(['acme', 'acme', 'globex']);
  });

  it('without any claim (no auth on the route) the header is the tenant, re-read on every use', async () => {
    const res = await post('/public', undefined, 'globex');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ tenantId: 'globex', strategy: 'header' });
  });
});
