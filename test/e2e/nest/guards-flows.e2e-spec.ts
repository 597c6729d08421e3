import { Injectable, Logger, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { FlowJob, FlowProducer } from 'bullmq';
import {
  InMemoryTenantDirectory,
  InjectTenantQueue,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantWorkerHost,
  parseCancelReason,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testConnection } from '../../support/test-redis';
import { sleep, waitFor } from '../../support/wait';
import { bootTestModule, testRootImports } from '../../support/test-module';

jest.setTimeout(30_000);

/**
 * A flow (BullMQ's FlowProducer) whose tenant is suspended after it was written: each child is
 * cancelled by the job guards like any job, and to BullMQ a cancelled child is a failed child, so
 * its parent follows the child's failure option (docs/guards.md, Outcomes).
 */
const ran: string[] = [];

@TenantProcessor('flows', { concurrency: 4 })
class FlowsProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    ran.push(job.id!);
  }
}

@Injectable()
class Producer {
  constructor(@InjectTenantQueue('flows') readonly flows: TenantQueue) {}
}

describe('a suspended tenant’s flow: cancelled children and their parent', () => {
  const directory = new InMemoryTenantDirectory([{ id: 'acme' }]);
  let moduleRef: TestingModule;
  let queue: TenantQueue;
  let flows: FlowProducer;

  beforeAll(async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('gf'), { directory: { useValue: directory } }),
        TenantQueueModule.registerQueue({ name: 'flows', tenantScoped: true }),
      ],
      providers: [FlowsProcessor, Producer],
    })
    class App {}
    moduleRef = await bootTestModule({ imports: [App] });
    queue = moduleRef.get(Producer).flows;
    // acme's envelope, as the module writes it.
    const probe = await queue.addForTenant('acme', 'probe', {});
    await waitFor(() => ran.includes(probe.id), 'the probe');
    const envelope = (await queue.bullQueue.getJob(probe.id))!.data._tenant;
    directory.setStatus('acme', 'suspended');
    flows = new FlowProducer({ connection: testConnection(), prefix: queue.bullQueue.opts.prefix });
    const flow = (id: string, childOpts: FlowJob['opts']): FlowJob => ({
      name: 'parent',
      queueName: 'flows',
      data: { _tenant: envelope },
      opts: { jobId: id },
      children: [
        {
          name: 'child',
          queueName: 'flows',
          data: { _tenant: envelope },
          opts: { jobId: `${id}-child`, ...childOpts },
        },
      ],
    });
    await flows.add(flow('fails', { failParentOnFailure: true }));
    await flows.add(flow('goes-on', { ignoreDependencyOnFailure: true }));
    await flows.add(flow('waits', {}));
    await waitFor(async () => {
      const states = await Promise.all(
        ['fails', 'goes-on', 'waits'].map((id) => queue.bullQueue.getJobState(`${id}-child`)),
      );
      return states.every((state) => state === 'failed');
    }, 'every child cancelled');
  });

  afterAll(async () => {
    await flows?.close();
    await moduleRef?.close();
    jest.restoreAllMocks();
  });

  const job = async (id: string) => (await queue.bullQueue.getJob(id))!;

  it('cancels every child (TENANT_SUSPENDED), none of them run', async () => {
    for (const id of ['fails', 'goes-on', 'waits']) {
      expect(parseCancelReason((await job(`${id}-child`)).failedReason)).toBe('TENANT_SUSPENDED');
    }
    expect(ran.filter((id) => id.endsWith('-child'))).toEqual([]);
  });

  it('failParentOnFailure: the parent fails with its child, never run', async () => {
    await waitFor(async () => (await job('fails').then((j) => j.getState())) === 'failed', 'fail');
    expect((await job('fails')).failedReason).toContain('fails-child');
    expect(ran).not.toContain('fails');
  });

  it('ignoreDependencyOnFailure: the parent goes on, and is cancelled by its own guard check', async () => {
    await waitFor(
      async () => (await job('goes-on').then((j) => j.getState())) === 'failed',
      'go on',
    );
    expect(parseCancelReason((await job('goes-on')).failedReason)).toBe('TENANT_SUSPENDED');
    expect(ran).not.toContain('goes-on');
  });

  it('no failure option: the parent keeps waiting for its children, as BullMQ does', async () => {
    await sleep(300);
    expect(await (await job('waits')).getState()).toBe('waiting-children');
  });
});
