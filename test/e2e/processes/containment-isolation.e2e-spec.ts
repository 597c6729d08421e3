import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  DeadLetters,
  InjectTenantQueue,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantWorkerHost,
  runInWorkerThread,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

jest.setTimeout(30_000);

const SPIN = join(__dirname, '..', '..', 'fixtures', 'containment-spin.js');
const counter = new SharedArrayBuffer(4);
const turns = () => Atomics.load(new Int32Array(counter), 0);
const done: string[] = [];

@TenantProcessor('cpu', { concurrency: 2, timeoutMs: 300 })
class CpuProcessor extends TenantWorkerHost {
  async process(
    job: TenantJob<{ label: string; forMs?: number }>,
    _t?: string,
    signal?: AbortSignal,
  ) {
    if (job.name === 'tick') {
      done.push(job.data.label);
      return 'tick';
    }
    return runInWorkerThread(SPIN, { ...job.data, counter }, { signal });
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('cpu') readonly cpu: TenantQueue<{ label: string; forMs?: number }>,
    readonly tenant: TenantContext,
  ) {}
}

describe('process-isolated work in a worker thread', () => {
  let app: TestingModule;
  let producer: Producer;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('iso')),
        TenantQueueModule.registerQueue({
          name: 'cpu',
          attempts: 2,
          backoff: { type: 'fixed', delay: 50 },
        }),
      ],
      providers: [CpuProcessor, Producer],
    })
    class AppModule {}
    app = await bootTestModule({ imports: [AppModule] });
    producer = app.get(Producer);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('returns what the thread returns', async () => {
    const job = await producer.tenant.run('acme', () =>
      producer.cpu.add('spin', { label: 'short', forMs: 20 }),
    );
    await waitFor(
      async () => (await producer.cpu.bullQueue.getJobState(job.id)) === 'completed',
      'short spin',
    );
    expect((await producer.cpu.bullQueue.getJob(job.id))?.returnvalue).toEqual({ label: 'short' });
  });

  it('kills a CPU-bound run at its deadline while the worker keeps serving other jobs', async () => {
    const spin = await producer.tenant.run('acme', () =>
      producer.cpu.add('spin', { label: 'forever' }),
    );
    await waitFor(() => turns() > 0, 'the thread to spin');
    const tick = await producer.tenant.run('globex', () =>
      producer.cpu.add('tick', { label: 'tick-during-spin' }),
    );
    await waitFor(() => done.includes('tick-during-spin'), 'a job beside the spinning one');
    expect(await producer.cpu.bullQueue.getJobState(tick.id)).toBe('completed');

    const deadLetters = app.get(DeadLetters);
    await waitFor(async () => !!(await deadLetters.get('acme', spin.id)), 'the dead letter');
    expect(await deadLetters.get('acme', spin.id)).toMatchObject({
      reason: 'TIMEOUT',
      attempts: 2,
    });
    // Terminated: the shared counter stops moving.
    const before = turns();
    await sleep(200);
    expect(turns()).toBe(before);
  });
});
