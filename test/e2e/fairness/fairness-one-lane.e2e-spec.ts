/**
 * A fair queue that declares a single lane (any share, with or without job names) is the queue
 * itself: its jobs run, capped and in turn. Such a queue once held every job in BullMQ's delayed
 * set for good: the gate filed them under the lane's name, and its paths for fewer than two
 * lanes read the queue's own (unnamed) lane.
 */
import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  TenantContext,
  TenantFairness,
  TenantFairnessOptions,
  TenantQueueModule,
  TenantQueueRegistry,
} from '../../../lib';
import { processorFor } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';
import { gateDrained } from '../../support/admissions';

const QUEUES: Record<string, TenantFairnessOptions> = {
  'one-lane-share0': { lanes: { only: { share: 0 } } },
  'one-lane-jobs': { lanes: { only: { share: 1, jobs: ['work'] } } },
  'one-lane-fifo': { lanes: { only: { share: 0.5 } }, priorityByTurn: false },
};
type Name = keyof typeof QUEUES;

/** Per queue: each job's tenants, and the most jobs of one tenant running at once. */
const runs = new Map<string, string[]>();
const live = new Map<string, number>();
let maxLive = 0;

const processor = (queue: string) =>
  processorFor<{ ms: number }>(queue, 4, async (job) => {
    const tenant = job.tenant!.tenantId;
    runs.set(job.id!, [...(runs.get(job.id!) ?? []), tenant]);
    const key = `${queue}/${tenant}`;
    live.set(key, (live.get(key) ?? 0) + 1);
    maxLive = Math.max(maxLive, live.get(key)!);
    await new Promise((resolve) => setTimeout(resolve, job.data.ms));
    live.set(key, live.get(key)! - 1);
  });

describe('a fair queue with one lane', () => {
  let moduleRef: TestingModule;
  const prefix = uniquePrefix('onelane');

  beforeAll(async () => {
    const names = Object.keys(QUEUES) as Name[];
    @Module({
      imports: [
        ...testRootImports(prefix),
        ...names.map((name) =>
          TenantQueueModule.registerQueue({
            name,
            fairness: { tickMs: 200, defaultConcurrency: 1, ...QUEUES[name] },
          }),
        ),
      ],
      providers: names.map(processor),
    })
    class OneLaneModule {}
    moduleRef = await Test.createTestingModule({ imports: [OneLaneModule] }).compile();
    await moduleRef.init();
  });

  afterAll(() => moduleRef?.close());

  it.each(Object.keys(QUEUES) as Name[])(
    '%s: every job runs once in its tenant, one at a time per tenant, and the gate drains',
    async (name) => {
      const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ ms: number }>(name);
      const context = moduleRef.get(TenantContext);
      maxLive = 0;
      const expected = new Map<string, string>();
      for (let n = 0; n < 3; n++) {
        for (const tenant of ['t1', 't2']) {
          // The lane asked for by name on some jobs, by the job's name or the default on others.
          const job = await context.run(tenant, () =>
            queue.add(n === 0 ? 'other' : 'work', { ms: 30 }, n === 1 ? { lane: 'only' } : {}),
          );
          expected.set(job.id!, tenant);
        }
      }
      await waitFor(
        async () => (await queue.bullQueue.getJobCounts('completed')).completed === expected.size,
        `the jobs of ${name} to complete`,
        20_000,
      );
      for (const [id, tenant] of expected) expect([id, runs.get(id)]).toEqual([id, [tenant]]);
      expect(maxLive).toBe(1);
      await gateDrained(moduleRef.get(TenantFairness), name, ['t1', 't2'], 10_000);
    },
  );
});
