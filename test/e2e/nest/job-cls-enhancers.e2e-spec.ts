import { CanActivate, ExecutionContext, Injectable, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TestingModule } from '@nestjs/testing';
import { ClsModuleOptions, ClsService } from 'nestjs-cls';
import {
  isTenantJobContext,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

interface Seen {
  own: string | undefined;
  before: string | undefined;
  after: string | undefined;
  clsId: string | undefined;
  correlationId: string | undefined;
}
const seen: Seen[] = [];
const guarded: (string | undefined)[] = [];

/** The app's own global guard: it still sees every job, in the job's tenant. */
@Injectable()
class AuditGuard implements CanActivate {
  constructor(private readonly tenant: TenantContext) {}
  canActivate(context: ExecutionContext): boolean {
    if (isTenantJobContext(context)) guarded.push(this.tenant.tenantId);
    return true;
  }
}

@TenantProcessor('mounted', { concurrency: 20 })
class MountedProcessor extends TenantWorkerHost {
  constructor(
    private readonly tenant: TenantContext,
    private readonly cls: ClsService,
  ) {
    super();
  }

  async process(job: TenantJob) {
    const before = this.tenant.tenantId;
    await sleep(Math.random() * 5);
    seen.push({
      own: job.tenant?.tenantId,
      before,
      after: this.tenant.tenantId,
      clsId: this.cls.getId(),
      correlationId: job.tenant?.correlationId,
    });
  }
}

describe.each<[string, ClsModuleOptions]>([
  ['ClsGuard', { guard: { mount: true, generateId: true } }],
  ['ClsInterceptor', { interceptor: { mount: true, generateId: true } }],
])('globalEnhancers: true with nestjs-cls %s mounted globally', (_name, cls) => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    seen.length = 0;
    guarded.length = 0;
    @Module({
      imports: [
        ...testRootImports(uniquePrefix(), { globalEnhancers: true }, cls),
        TenantQueueModule.registerQueue({ name: 'mounted', attempts: 1 }),
      ],
      providers: [MountedProcessor, { provide: APP_GUARD, useClass: AuditGuard }],
    })
    class AppModule {}
    moduleRef = await bootTestModule({ imports: [AppModule] });
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  it("runs each job in its own tenant's context, its CLS id the job's correlation id", async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue('mounted') as TenantQueue;
    for (let i = 0; i < 40; i++) await queue.addForTenant(['t-a', 't-b'][i % 2], 'work', { i });
    await waitFor(() => seen.length === 40, 'every job');
    for (const run of seen) {
      expect([run.before, run.after]).toEqual([run.own, run.own]);
      expect(run.clsId).toBe(run.correlationId);
    }
    expect(guarded.sort()).toEqual([...Array(20).fill('t-a'), ...Array(20).fill('t-b')]);
  });
});
