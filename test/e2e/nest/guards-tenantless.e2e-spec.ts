import { Injectable, Logger, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  InMemoryActorPermissionChecker,
  InMemoryEntitlementChecker,
  InMemoryTenantDirectory,
  InjectTenantQueue,
  RequiresActorPermission,
  RequiresEntitlement,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantWorkerHost,
  parseCancelReason,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';
import { bootTestModule, testRootImports } from '../../support/test-module';

jest.setTimeout(30_000);

/**
 * Jobs enqueued without a tenant on purpose (a `systemJobs` name, a queue that is not
 * tenant-scoped) on a processor that requires an entitlement or a permission: there is no tenant
 * to check them against, so the job is cancelled, and the reason must say that, not tell the
 * user to do what they already did (declare the name in systemJobs, enqueue through TenantQueue).
 */
const ran: string[] = [];

@TenantProcessor('mixed')
class SweepProcessor extends TenantWorkerHost {
  @RequiresActorPermission('sweep:run')
  async process(job: TenantJob) {
    ran.push(job.id!);
  }
}

@RequiresEntitlement('reports')
@TenantProcessor('open')
class OpenProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    ran.push(job.id!);
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('mixed') readonly mixed: TenantQueue,
    @InjectTenantQueue('open') readonly open: TenantQueue,
  ) {}
}

describe('a tenantless job on a processor with @RequiresEntitlement / @RequiresActorPermission', () => {
  let moduleRef: TestingModule;
  let producer: Producer;

  beforeAll(async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('gt'), {
          directory: { useValue: new InMemoryTenantDirectory([{ id: 'acme' }]) },
          entitlementChecker: { useValue: new InMemoryEntitlementChecker({ acme: ['reports'] }) },
          actorPermissionChecker: { useValue: new InMemoryActorPermissionChecker() },
        }),
        TenantQueueModule.registerQueue(
          { name: 'mixed', tenantScoped: true, systemJobs: ['sweep'] },
          { name: 'open', tenantScoped: false },
        ),
      ],
      providers: [SweepProcessor, OpenProcessor, Producer],
    })
    class App {}
    moduleRef = await bootTestModule({ imports: [App] });
    producer = moduleRef.get(Producer);
  });

  afterAll(async () => {
    await moduleRef?.close();
    jest.restoreAllMocks();
  });

  async function outcome(queue: TenantQueue, id: string) {
    await waitFor(
      async () => ['completed', 'failed'].includes(await queue.bullQueue.getJobState(id)),
      `job ${id} to end`,
    );
    return (await queue.bullQueue.getJob(id))!;
  }

  it('a systemJobs name without a tenant: cancelled, naming the requirement, not systemJobs', async () => {
    const job = await outcome(producer.mixed, (await producer.mixed.add('sweep', {})).id);
    expect(parseCancelReason(job.failedReason)).toBe('MISSING_TENANT');
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toContain(
      `Job "sweep" on queue "mixed" was enqueued without a tenant (a system job), but SweepProcessor requires @RequiresActorPermission('sweep:run')`,
    );
    expect(job.failedReason).not.toContain('systemJobs');
    expect(ran).not.toContain(job.id);
  });

  it('a queue that is not tenant-scoped: cancelled, not called "tenant-scoped"', async () => {
    const job = await outcome(producer.open, (await producer.open.add('report', {})).id);
    expect(parseCancelReason(job.failedReason)).toBe('MISSING_TENANT');
    expect(job.failedReason).toContain(
      `OpenProcessor requires @RequiresEntitlement('reports'), which only a tenant's job can be checked for`,
    );
    expect(job.failedReason).not.toContain('tenant-scoped queue');
    expect(ran).not.toContain(job.id);
  });

  it('the same job name for a tenant is checked and runs', async () => {
    const job = await outcome(
      producer.open,
      (await producer.open.addForTenant('acme', 'report', {})).id,
    );
    expect(await job.getState()).toBe('completed');
    expect(ran).toContain(job.id);
  });
});
