/**
 * A budget's cap held by another queue of the budget, met by the gate's run-time calls and its
 * floors (found by the pairs matrix: every pair of modes on one queue, two worker processes).
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

interface HoldJob {
  ms: number;
}

/** Two queues of one budget, each with a processor that records what runs at once. */
async function bootBudget(fairness: TenantFairnessOptions) {
  const running = new Map<string, number>();
  const most = new Map<string, number>();
  const done: string[] = [];
  const processor = (queue: string) =>
    processorFor<HoldJob>(queue, 4, async (job) => {
      const tenant = job.tenant!.tenantId;
      running.set(tenant, (running.get(tenant) ?? 0) + 1);
      most.set(tenant, Math.max(most.get(tenant) ?? 0, running.get(tenant)!));
      await new Promise((resolve) => setTimeout(resolve, job.data.ms));
      running.set(tenant, running.get(tenant)! - 1);
      done.push(`${queue}|${job.id}`);
    });
  @Module({
    imports: [
      ...testRootImports(uniquePrefix('bholds')),
      TenantQueueModule.registerQueue(
        { name: 'bh-a', budget: 'bh', fairness },
        { name: 'bh-b', budget: 'bh', fairness },
      ),
    ],
    providers: [processor('bh-a'), processor('bh-b')],
  })
  class HoldsModule {}
  const moduleRef = await Test.createTestingModule({ imports: [HoldsModule] }).compile();
  await moduleRef.init();
  const add = (queue: string, tenant: string, count: number, ms: number) =>
    moduleRef.get(TenantContext).run(tenant, () =>
      moduleRef
        .get(TenantQueueRegistry)
        .getQueue<HoldJob>(queue)
        .addBulk(Array.from({ length: count }, () => ({ name: 'work', data: { ms } }))),
    );
  return { moduleRef, most, done, add };
}

describe("a budget's cap reached through another queue (real Redis)", () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('runs the jobs of a tenant resumed while the other queue holds its cap', async () => {
    // Resumed (or given a cap) while its budget count is at the cap through bh-b, the tenant was
    // taken out of bh-a's turn without bh-a recording that it holds it back: bh-b's release then
    // woke no queue, and the tenant's jobs on bh-a waited for ever.
    const app = await bootBudget({ defaultConcurrency: 1, tickMs: 200 });
    moduleRef = app.moduleRef;
    const fairness = moduleRef.get(TenantFairness);
    await fairness.pause('bh-a', 'acme');
    const held = await app.add('bh-a', 'acme', 2, 10);
    await app.add('bh-b', 'acme', 1, 1500);
    await waitFor(async () => (await fairness.getTenant('bh-b', 'acme')).inFlight === 1, 'bh-b');
    await fairness.resume('bh-a', 'acme');
    await waitFor(
      () => held.every((job) => app.done.includes(`bh-a|${job.id}`)),
      "acme's jobs on bh-a after bh-b's ended",
      15_000,
    );
    expect(app.most.get('acme')).toBe(1);
  });

  it("keeps a floor tenant within the budget's cap across the queues", async () => {
    // Each queue topped its floor tenant up to twice its floor (at most its cap) by the tenant's
    // jobs in flight on that queue alone: a floor of 1 and a cap of 2 ran 4 at once over two
    // queues of one budget.
    const app = await bootBudget({ defaultConcurrency: 2, defaultMinConcurrency: 1, tickMs: 200 });
    moduleRef = app.moduleRef;
    const a = await app.add('bh-a', 'acme', 8, 150);
    const b = await app.add('bh-b', 'acme', 8, 150);
    await waitFor(() => app.done.length === a.length + b.length, 'every job', 30_000);
    expect(app.most.get('acme')).toBe(2);
  });
});
