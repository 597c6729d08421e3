import { Injectable, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  InjectTenantQueue,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { waitFor } from '../../support/wait';

const seen: { job: string; tenantId?: string; envelope: boolean }[] = [];

@TenantProcessor('maintenance')
class MaintenanceProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }
  async process(job: TenantJob) {
    seen.push({
      job: job.name,
      tenantId: this.tenant.tenantId,
      envelope: job.tenant !== undefined,
    });
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('maintenance') readonly queue: TenantQueue,
    readonly tenant: TenantContext,
  ) {}
}

describe('a queue declared tenantScoped: false', () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix()),
        TenantQueueModule.registerQueue({ name: 'maintenance', tenantScoped: false }),
      ],
      providers: [MaintenanceProcessor, Producer],
    })
    class AppModule {}
    moduleRef = await bootTestModule({ imports: [AppModule] });
  });

  afterAll(() => moduleRef.close());

  it('takes jobs without a tenant and runs them with none', async () => {
    const { queue } = moduleRef.get(Producer);
    const job = await queue.add('vacuum', {});
    expect(job.tenantId).toBeUndefined();
    await waitFor(() => seen.some((s) => s.job === 'vacuum'), 'the system job');
    expect(seen.find((s) => s.job === 'vacuum')).toEqual({
      job: 'vacuum',
      tenantId: undefined,
      envelope: false,
    });
  });

  it('still attaches the tenant when there is one, and the worker restores it', async () => {
    const { queue, tenant } = moduleRef.get(Producer);
    await tenant.run('acme', () => queue.add('reindex', {}));
    await waitFor(() => seen.some((s) => s.job === 'reindex'), 'the tenant job');
    expect(seen.find((s) => s.job === 'reindex')).toEqual({
      job: 'reindex',
      tenantId: 'acme',
      envelope: true,
    });
  });
});
