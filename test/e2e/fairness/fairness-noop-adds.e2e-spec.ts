/**
 * Issue 22, item 3: adds BullMQ drops (a re-add of a finished job's id; a job whose deduplication
 * id is held, before fair queues refused deduplication) were admitted by the gate and kept their lease until `leaseMs`: 16 of them filled a
 * 16-job window and every other tenant waited ~30 s with idle workers; with a cap of 1 one such
 * add held the tenant's only slot. A job BullMQ does not take is released at once.
 */
import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  InvalidJobOptionsError,
  TenantContext,
  TenantFairness,
  TenantQueueModule,
  TenantQueueRegistry,
} from '../../../lib';
import { processorFor } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

/** Leases far longer than the test waits: a slot comes back only by its release. */
const LEASE_MS = 60_000;
const ran: string[] = [];

const noopProcessor = (queue: string) =>
  processorFor<{ n: number }>(queue, 2, async (job) => {
    ran.push(`${queue}|${job.tenant!.tenantId}|${job.id}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  });

describe('issue 22: adds BullMQ does not take hold no slot', () => {
  let moduleRef: TestingModule;
  const prefix = uniquePrefix('noop');

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(prefix),
        TenantQueueModule.registerQueue({
          name: 'noop-cap',
          fairness: { defaultConcurrency: 1, leaseMs: LEASE_MS, tickMs: 200 },
        }),
        TenantQueueModule.registerQueue({
          name: 'noop-window',
          fairness: { window: 4, leaseMs: LEASE_MS, tickMs: 200 },
        }),
      ],
      providers: [noopProcessor('noop-cap'), noopProcessor('noop-window')],
    })
    class NoopModule {}
    moduleRef = await Test.createTestingModule({ imports: [NoopModule] }).compile();
    await moduleRef.init();
  });

  afterAll(() => moduleRef?.close());

  const add = (queue: string, tenant: string, opts: object = {}) =>
    moduleRef
      .get(TenantContext)
      .run(tenant, () =>
        moduleRef.get(TenantQueueRegistry).getQueue<{ n: number }>(queue).add('n', { n: 1 }, opts),
      );
  const completed = (queue: string, id: string) =>
    waitFor(
      async () =>
        (await moduleRef.get(TenantQueueRegistry).getQueue(queue).bullQueue.getJobState(id)) ===
        'completed',
      `job ${id} of ${queue} to complete`,
      10_000,
    );
  const drained = (queue: string, tenant: string) =>
    waitFor(
      async () => (await moduleRef.get(TenantFairness).getTenant(queue, tenant)).inFlight === 0,
      `${tenant}'s slots on ${queue} to be free`,
      10_000,
    );

  it("a re-add of a finished job's id frees the tenant's only slot at once (cap 1)", async () => {
    await completed('noop-cap', (await add('noop-cap', 'A', { jobId: 'once' })).id!);
    // The README's harmless duplicate: BullMQ keeps the finished job and takes nothing.
    await add('noop-cap', 'A', { jobId: 'once' });
    await drained('noop-cap', 'A');
    const next = await add('noop-cap', 'A');
    await completed('noop-cap', next.id!);
    expect(ran.filter((run) => run === 'noop-cap|A|once')).toHaveLength(1);
  });

  it('deduplication on a fair queue is refused before any write, so it can hold no slot (cap 1)', async () => {
    // The gate hands jobs to BullMQ after add() returned, so a deduplicated add would leave an id
    // no job has: the producer refuses the option on fair queues (issue 23). Nothing is admitted.
    const dedup = { deduplication: { id: 'same', ttl: LEASE_MS } };
    await expect(add('noop-cap', 'B', dedup)).rejects.toBeInstanceOf(InvalidJobOptionsError);
    const state = await moduleRef.get(TenantFairness).getTenant('noop-cap', 'B');
    expect({ inFlight: state.inFlight, backlog: state.backlog }).toEqual({
      inFlight: 0,
      backlog: 0,
    });
    const next = await add('noop-cap', 'B');
    await completed('noop-cap', next.id!);
  });

  it("no-op adds do not fill the window: another tenant's job runs at once", async () => {
    const ids: string[] = [];
    for (let n = 0; n < 4; n++) ids.push((await add('noop-window', 'C', { jobId: `c-${n}` })).id!);
    for (const id of ids) await completed('noop-window', id);
    for (let round = 0; round < 2; round++) {
      for (const id of ids) await add('noop-window', 'C', { jobId: id });
    }
    const other = await add('noop-window', 'D');
    await completed('noop-window', other.id!);
    await drained('noop-window', 'C');
    expect(ran.filter((run) => run.startsWith('noop-window|C|'))).toHaveLength(4);
  });
});
