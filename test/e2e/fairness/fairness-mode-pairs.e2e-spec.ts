/**
 * Issue 22, item 1: every pair of the gate's modes on one queue (time share, floors, fair keys, a
 * budget, lanes, a rate limit, the slow lane). The modes were tested one at a time and all of
 * issue 18's together, never time share with a floor in one queue, which wedged the gate: a gate
 * call failed in Lua on every add, tick and release. Per pair: every job ends exactly once in its
 * own tenant, no add throws and no gate call logs an error, and the gate drains to nothing.
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
import { CollectingLogger } from '../../support/collecting-logger';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

type Mode = 'time' | 'floors' | 'keys' | 'budget' | 'lanes' | 'rate' | 'slow';
const MODES: Mode[] = ['time', 'floors', 'keys', 'budget', 'lanes', 'rate', 'slow'];
const PAIRS: [Mode, Mode][] = MODES.flatMap((a, i) =>
  MODES.slice(i + 1).map((b) => [a, b] as [Mode, Mode]),
);
const TENANTS = ['t1', 't2', 't3', 't4'];
const PER_TENANT = 6;

/** Each mode's part of the queue's fairness options (the report's window of 4 for all). */
const FAIRNESS: Record<Mode, TenantFairnessOptions> = {
  time: { share: 'time' },
  floors: { defaultMinConcurrency: 1 },
  keys: { fairKey: 'job' },
  budget: {},
  lanes: { lanes: { now: { share: 0.5 }, bulk: { share: 0.5, jobs: ['bulk'] } } },
  rate: { rateLimit: { max: 100, per: 1000, burst: 2 } },
  slow: { slowLane: { failureThreshold: 2, windowMs: 5_000, recoverAt: 0 } },
};

const queueOf = ([a, b]: [Mode, Mode]) => `pair-${a}-${b}`;

interface PairJob {
  ms: number;
  fail: boolean;
}

/** Per queue, per job id: the tenants its handler ran in. */
const runs = new Map<string, Map<string, string[]>>();

/** The pair's processor: records each run's tenant, waits its `ms`, fails where asked. */
const pairProcessor = (queue: string) =>
  processorFor<PairJob>(queue, 2, async (job) => {
    const seen = runs.get(queue)!;
    seen.set(job.id!, [...(seen.get(job.id!) ?? []), job.tenant!.tenantId]);
    await new Promise((resolve) => setTimeout(resolve, job.data.ms));
    if (job.data.fail) throw new Error('this job fails (slow lane)');
  });

describe('issue 22: every pair of the fair modes on one queue', () => {
  let moduleRef: TestingModule;
  const logger = new CollectingLogger();
  const prefix = uniquePrefix('pairs');

  beforeAll(async () => {
    for (const pair of PAIRS) runs.set(queueOf(pair), new Map());
    @Module({
      imports: [
        ...testRootImports(prefix),
        ...PAIRS.map((pair) =>
          TenantQueueModule.registerQueue({
            name: queueOf(pair),
            ...(pair.includes('budget') ? { budget: `b-${queueOf(pair)}` } : {}),
            fairness: {
              window: 4,
              tickMs: 200,
              ...FAIRNESS[pair[0]],
              ...FAIRNESS[pair[1]],
            },
          }),
        ),
      ],
      providers: PAIRS.map((pair) => pairProcessor(queueOf(pair))),
    })
    class PairsModule {}
    moduleRef = await Test.createTestingModule({ imports: [PairsModule] })
      .setLogger(logger)
      .compile();
    await moduleRef.init();
  });

  afterAll(() => moduleRef?.close());

  it.each(PAIRS)(
    '%s + %s: every job ends once in its tenant, no gate error, drains',
    async (a, b) => {
      const pair: [Mode, Mode] = [a, b];
      const name = queueOf(pair);
      const queue = moduleRef.get(TenantQueueRegistry).getQueue<PairJob>(name);
      const context = moduleRef.get(TenantContext);
      const fairness = moduleRef.get(TenantFairness);
      const logged = logger.lines.length;
      const expected = new Map<string, string>();
      const failing = new Set<string>();
      // The report's shape: one add at a time, interleaved over 4 tenants.
      for (let n = 0; n < PER_TENANT; n++) {
        for (const tenant of TENANTS) {
          const fail = pair.includes('slow') && tenant === 't4';
          const job = await context.run(tenant, () =>
            queue.add(
              n % 3 === 0 ? 'bulk' : 'work',
              { ms: 5 + (n % 3) * 10, fail },
              {
                attempts: 1,
                ...(pair.includes('keys') ? { fairKey: `k${n % 2}` } : {}),
              },
            ),
          );
          expected.set(job.id!, tenant);
          if (fail) failing.add(job.id!);
        }
      }
      const bull = queue.bullQueue;
      await waitFor(
        async () => {
          const counts = await bull.getJobCounts('completed', 'failed');
          return counts.completed + counts.failed === expected.size;
        },
        `every job of ${name} to end`,
        60_000,
      );
      const seen = runs.get(name)!;
      for (const [id, tenant] of expected) {
        expect([id, seen.get(id)]).toEqual([id, [tenant]]);
        expect([id, await bull.getJobState(id)]).toEqual([
          id,
          failing.has(id) ? 'failed' : 'completed',
        ]);
      }
      expect(seen.size).toBe(expected.size);
      await waitFor(
        async () => {
          for (const tenant of TENANTS) {
            const state = await fairness.getTenant(name, tenant);
            if (state.backlog !== 0 || state.inFlight !== 0) return false;
          }
          return true;
        },
        `the gate of ${name} to drain`,
        15_000,
      );
      expect(logger.gateErrors(logged)).toEqual([]);
    },
    90_000,
  );
});
