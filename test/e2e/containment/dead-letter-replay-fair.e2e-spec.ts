import { Injectable, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  DeadLetter,
  DeadLetters,
  InjectTenantQueue,
  InvalidLaneError,
  NonRetryableError,
  TenantFairness,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueInspector,
  TenantQueueModule,
  TenantWorkerHost,
  TenantContext,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

interface Run {
  jobId: string;
  lane: string | undefined;
  fairKey: string | undefined;
}

const runs: Run[] = [];
let fixed = false;

@TenantProcessor('placed', { concurrency: 2 })
class PlacedProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ n: number }>) {
    runs.push({
      jobId: job.id!,
      lane: (job.opts as { lane?: string }).lane,
      fairKey: job.tenant?.fairKey,
    });
    if (!fixed) throw new NonRetryableError('not fixed yet');
    return 'ok';
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('placed') readonly queue: TenantQueue<{ n: number }>,
    readonly tenant: TenantContext,
  ) {}
}

/**
 * A dead letter of a fair queue comes back where it was: its replay keeps the `lane` the job
 * asked for and the fair key its envelope carried (before, a replay went to the default lane
 * and lost its key).
 */
describe('DeadLetters.replay on a fair queue with lanes and fair keys', () => {
  let app: TestingModule;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('dl-fair')),
        TenantQueueModule.registerQueue({
          name: 'placed',
          attempts: 1,
          fairness: {
            lanes: { interactive: { share: 0.7 }, bulk: { share: 0.3 } },
            defaultLane: 'interactive',
            fairKey: 'job',
          },
        }),
      ],
      providers: [PlacedProcessor, Producer],
    })
    class AppModule {}
    app = await bootTestModule({ imports: [AppModule] });
  });

  afterAll(async () => {
    await app?.close();
  });

  it('replays into the same lane with the same fair key', async () => {
    const { queue, tenant } = app.get(Producer);
    const deadLetters = app.get(DeadLetters);
    const job = await tenant.run('acme', () =>
      queue.add('chunk', { n: 1 }, { lane: 'bulk', fairKey: 'user-7' }),
    );
    let letter: DeadLetter | undefined;
    await waitFor(
      async () => !!(letter = await deadLetters.get('acme', job.id)),
      'the dead letter',
    );
    expect(letter!.opts.lane).toBe('bulk');
    expect(letter!.envelope.fairKey).toBe('user-7');
    expect(runs).toEqual([{ jobId: job.id, lane: 'bulk', fairKey: 'user-7' }]);

    // Held by a pause, the replay shows where the gate put it.
    const fairness = app.get(TenantFairness);
    await fairness.pause('placed', 'acme');
    fixed = true;
    const replayed = await deadLetters.replay('acme', job.id);
    const answer = await app.get(TenantQueueInspector).explain('placed', replayed.id);
    expect(answer.gate).toMatchObject({ lane: 'bulk' });
    await fairness.resume('placed', 'acme');
    await waitFor(async () => runs.length === 2, 'the replay to run');
    expect(runs[1]).toEqual({ jobId: replayed.id, lane: 'bulk', fairKey: 'user-7' });
  });
});

/**
 * A replay is an add with the letter's options: after the queue dropped the letter's lane, it is
 * refused as that add would be (docs/containment.md), and the letter stays for a later replay.
 */
describe('DeadLetters.replay after its queue dropped the letter lane', () => {
  const prefix = uniquePrefix('dl-lane');

  async function boot(lanes: Record<string, { share: number }>): Promise<TestingModule> {
    @Module({
      imports: [
        ...testRootImports(prefix),
        TenantQueueModule.registerQueue({ name: 'placed', attempts: 1, fairness: { lanes } }),
      ],
      providers: [PlacedProcessor, Producer],
    })
    class AppModule {}
    return bootTestModule({ imports: [AppModule] });
  }

  it('refuses with InvalidLaneError and keeps the letter', async () => {
    fixed = false;
    const before = await boot({ interactive: { share: 0.5 }, bulk: { share: 0.5 } });
    let jobId: string;
    try {
      const { queue, tenant } = before.get(Producer);
      jobId = (await tenant.run('acme', () => queue.add('chunk', { n: 2 }, { lane: 'bulk' }))).id;
      await waitFor(
        async () => !!(await before.get(DeadLetters).get('acme', jobId)),
        'the dead letter',
      );
    } finally {
      await before.close();
    }
    const after = await boot({ interactive: { share: 1 } });
    try {
      const deadLetters = after.get(DeadLetters);
      const refusal = await deadLetters.replay('acme', jobId).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(InvalidLaneError);
      expect((refusal as Error).message).toMatch(/"bulk"/);
      expect((await deadLetters.get('acme', jobId))?.opts.lane).toBe('bulk');
      expect(await deadLetters.purge('acme', jobId)).toBe(1);
    } finally {
      await after.close();
    }
  });
});
