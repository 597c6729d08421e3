import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Job } from 'bullmq';
import {
  DeadLetters,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

/** Runs per job label; a label fails until it is in `fixed`. */
const runs = new Map<string, number>();
const fixed = new Set<string>();

// Completed jobs are kept (BullMQ's default): a replay's job outlives its letter.
@TenantProcessor('invoices', { concurrency: 2 })
class InvoiceProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ label: string }>) {
    runs.set(job.data.label, (runs.get(job.data.label) ?? 0) + 1);
    if (!fixed.has(job.data.label)) throw new Error(`not fixed yet: ${job.data.label}`);
    return job.data.label;
  }
}

describe('DeadLetters.replay of a job id the tenant used again after an earlier replay', () => {
  let app: INestApplication;
  let deadLetters: DeadLetters;
  let registry: TenantQueueRegistry;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('dlqid')),
        TenantQueueModule.registerQueue({ name: 'invoices', attempts: 1 }),
      ],
      providers: [InvoiceProcessor],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    deadLetters = app.get(DeadLetters);
    registry = app.get(TenantQueueRegistry);
  });

  afterAll(async () => {
    await app?.close();
  });

  /** Adds `label` under the caller's own job id `inv-1` and waits for its dead letter. */
  async function failsUnderInv1(label: string): Promise<void> {
    await registry
      .getQueue('invoices')
      .addForTenant('acme', 'charge', { label }, { jobId: 'inv-1' });
    await waitFor(
      async () => (await deadLetters.get('acme', 'inv-1'))?.data.label === label,
      `the dead letter of ${label}`,
    );
  }

  it('runs each round under an id of its own (.r1, then .r2), never as a duplicate of the earlier replay', async () => {
    const bull = registry.getQueue('invoices').bullQueue;
    await failsUnderInv1('round-1');
    fixed.add('round-1');
    const first = await deadLetters.replay('acme', 'inv-1');
    expect(first.id).toBe('inv-1.r1');
    await waitFor(async () => (await bull.getJobState('inv-1.r1')) === 'completed', 'round 1');

    // The same id again (the replay took its failed job out of BullMQ): a new run, failing too.
    await failsUnderInv1('round-2');
    fixed.add('round-2');
    const second = await deadLetters.replay('acme', 'inv-1');
    // inv-1.r1 is round 1's completed job: an add under it would have run nothing.
    expect(second.id).toBe('inv-1.r2');
    await waitFor(async () => runs.get('round-2') === 2, "round 2's replay to run");
    await waitFor(async () => (await bull.getJobState('inv-1.r2')) === 'completed', 'round 2');
    expect((await Job.fromId(bull, 'inv-1.r1'))!.returnvalue).toBe('round-1');
    expect((await Job.fromId(bull, 'inv-1.r2'))!.returnvalue).toBe('round-2');
    expect(await deadLetters.get('acme', 'inv-1')).toBeUndefined();
    expect(runs.get('round-1')).toBe(2);
  });

  it('two replays of one letter at once still run its work once, under one id', async () => {
    await failsUnderInv1('round-3');
    fixed.add('round-3');
    const outcomes = await Promise.allSettled([
      deadLetters.replay('acme', 'inv-1'),
      deadLetters.replay('acme', 'inv-1'),
    ]);
    const ids = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.id] : []));
    expect(ids.length).toBeGreaterThan(0);
    // Past .r1 and .r2, which earlier rounds' completed jobs hold.
    expect(new Set(ids)).toEqual(new Set(['inv-1.r3']));
    const bull = registry.getQueue('invoices').bullQueue;
    await waitFor(async () => (await bull.getJobState('inv-1.r3')) === 'completed', 'round 3');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runs.get('round-3')).toBe(2);
  });
});
