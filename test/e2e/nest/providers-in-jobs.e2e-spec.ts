import { Inject, Injectable, Module, Scope } from '@nestjs/common';
import { ContextIdFactory, ModuleRef, REQUEST } from '@nestjs/core';
import { TestingModule } from '@nestjs/testing';
import {
  TenantContext,
  TenantContextIdStrategy,
  TenantJob,
  TenantJobRequest,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantRequestPayload,
  TenantWorkerHost,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

let serial = 0;
/** Instance serial -> every tenant it was built for or seen serving. */
const tenantsOf = new Map<number, Set<string | undefined>>();
const mark = (serial: number, tenantId: string | undefined) =>
  tenantsOf.set(serial, (tenantsOf.get(serial) ?? new Set()).add(tenantId));

interface Run {
  jobId: string;
  own: string | undefined;
  context: string | undefined;
  durable?: string | undefined;
  perJob?: [string | undefined, boolean];
  resolved?: string | undefined;
  withoutContextId?: string;
}
const runs: Run[] = [];

@Injectable({ scope: Scope.REQUEST, durable: true })
class TenantClient {
  readonly serial = ++serial;
  readonly tenantId: string | undefined;
  constructor(@Inject(REQUEST) payload: TenantRequestPayload) {
    this.tenantId = payload.tenantId;
    mark(this.serial, this.tenantId);
  }
}

@Injectable({ scope: Scope.REQUEST })
class JobWorkspace {
  readonly serial = ++serial;
  constructor(@Inject(REQUEST) readonly request: TenantJobRequest) {
    mark(this.serial, request.tenantId);
  }
}

/** Depends on a per-job provider: resolved per job. */
@TenantProcessor('scoped', { concurrency: 25 })
class ScopedProcessor extends TenantWorkerHost {
  constructor(
    private readonly client: TenantClient,
    private readonly workspace: JobWorkspace,
    private readonly tenant: TenantContext,
  ) {
    super();
  }

  async process(job: TenantJob) {
    await sleep(Math.random() * 10);
    mark(this.client.serial, job.tenant?.tenantId);
    runs.push({
      jobId: job.id!,
      own: job.tenant?.tenantId,
      context: this.tenant.tenantId,
      durable: this.client.tenantId,
      perJob: [this.workspace.request.tenantId, this.workspace.request.job === job],
    });
  }
}

/** A singleton that resolves the tenant's client itself, as providers.md shows. */
@TenantProcessor('singleton', { concurrency: 25 })
class SingletonProcessor extends TenantWorkerHost {
  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly tenant: TenantContext,
  ) {
    super();
  }

  async process(job: TenantJob) {
    const request = new TenantJobRequest(job.tenant?.tenantId, job);
    const contextId = ContextIdFactory.getByRequest(request);
    this.moduleRef.registerRequestByContextId(request, contextId);
    const client = await this.moduleRef.resolve(TenantClient, contextId, { strict: false });
    // Without a context id, Nest builds a tree of its own with no REQUEST.
    const withoutContextId = await this.moduleRef
      .resolve(TenantClient, undefined, { strict: false })
      .then(
        () => 'built',
        (error: Error) => error.constructor.name,
      );
    await sleep(Math.random() * 10);
    mark(client.serial, job.tenant?.tenantId);
    runs.push({
      jobId: job.id!,
      own: job.tenant?.tenantId,
      context: this.tenant.tenantId,
      resolved: client.tenantId,
      withoutContextId,
    });
  }
}

describe('request-scoped and durable providers in jobs (concurrency 25, four tenants)', () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    // Two tenants kept for four: their durable instances are dropped and rebuilt all along.
    ContextIdFactory.apply(new TenantContextIdStrategy({ maxTenants: 2 }));
    @Module({
      imports: [
        ...testRootImports(uniquePrefix()),
        TenantQueueModule.registerQueue({ name: 'scoped', attempts: 1 }),
        TenantQueueModule.registerQueue({ name: 'singleton', attempts: 1 }),
      ],
      providers: [ScopedProcessor, SingletonProcessor, TenantClient, JobWorkspace],
    })
    class AppModule {}
    moduleRef = await bootTestModule({ imports: [AppModule] });
  });

  afterAll(async () => {
    await moduleRef?.close();
    ContextIdFactory.apply(undefined as never);
  });

  it('never shares an instance between tenants, and REQUEST is always the job', async () => {
    const registry = moduleRef.get(TenantQueueRegistry);
    const scoped = registry.getQueue('scoped') as TenantQueue;
    const singleton = registry.getQueue('singleton') as TenantQueue;
    const tenants = ['t-a', 't-b', 't-c', 't-d'];
    for (let i = 0; i < 200; i++) {
      await scoped.addForTenant(tenants[i % 4], 'work', { i });
      if (i % 2 === 0) await singleton.addForTenant(tenants[i % 4], 'work', { i });
    }
    await waitFor(() => runs.length === 300, 'every job', 60_000);
    for (const run of runs) {
      expect(run.context).toBe(run.own);
      if (run.perJob) {
        expect(run.durable).toBe(run.own);
        expect(run.perJob).toEqual([run.own, true]);
      } else {
        expect(run.resolved).toBe(run.own);
        expect(run.withoutContextId).toBe('TypeError');
      }
    }
    const shared = [...tenantsOf].filter(([, seen]) => seen.size > 1);
    expect(shared).toEqual([]);
  });
});
