import { Injectable, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  InMemoryTenantDirectory,
  InjectTenantQueue,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantRecord,
  TenantWorkerHost,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';
import { bootTestModule, testRootImports } from '../../support/test-module';

jest.setTimeout(30_000);

/** A directory that holds every answer until the test opens it, counting the questions. */
class HeldDirectory extends InMemoryTenantDirectory {
  asked = 0;
  private open!: () => void;
  private readonly opened = new Promise<void>((resolve) => (this.open = resolve));

  override async getTenant(tenantId: string): Promise<TenantRecord | null> {
    this.asked++;
    await this.opened;
    return super.getTenant(tenantId);
  }

  answer(): void {
    this.open();
  }
}

const ran: string[] = [];

@TenantProcessor('burst', { concurrency: 20, autorun: false })
class BurstProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    ran.push(job.id!);
  }
}

@Injectable()
class Producer {
  constructor(@InjectTenantQueue('burst') readonly burst: TenantQueue) {}
}

describe('guards.tenantCacheTtlMs and a burst of one tenant’s jobs', () => {
  const directory = new HeldDirectory([{ id: 'acme' }]);
  let moduleRef: TestingModule;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('gc'), {
          directory: { useValue: directory },
          guards: { tenantCacheTtlMs: 30_000, portTimeoutMs: 20_000 },
        }),
        TenantQueueModule.registerQueue({ name: 'burst' }),
      ],
      providers: [BurstProcessor, Producer],
    })
    class App {}
    moduleRef = await bootTestModule({ imports: [App] });
  });

  afterAll(async () => {
    directory.answer();
    await moduleRef?.close();
  });

  it('20 jobs that miss the cache together ask the directory once, and all run', async () => {
    const queue = moduleRef.get(Producer).burst;
    const jobs = [];
    for (let i = 0; i < 20; i++) jobs.push(await queue.addForTenant('acme', 'j', { i }));
    moduleRef
      .get(BurstProcessor)
      .worker.run()
      .catch(() => undefined);
    // Every job taken by the worker and waiting on the directory's one answer.
    await waitFor(async () => (await queue.bullQueue.getActiveCount()) === 20, '20 active jobs');
    directory.answer();
    await waitFor(() => ran.length === 20, 'the 20 jobs to run');
    expect(directory.asked).toBe(1);
    expect(new Set(ran)).toEqual(new Set(jobs.map((job) => job.id)));
  });
});
