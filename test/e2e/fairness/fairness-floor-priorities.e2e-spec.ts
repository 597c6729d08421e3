/**
 * Floors on a queue whose gate gives BullMQ priorities (lanes, priority by turn): a floor
 * tenant's jobs go to the head of BullMQ's wait list, as on a plain fair queue (found by the
 * pairs matrix, lanes + floors: with the queue default floor every tenant's jobs went to the wait
 * list in admission order, so a tenant that came after a flood waited behind all of it).
 */
import { TestingModule } from '@nestjs/testing';
import { FairJobData, Started, bootFairApp } from '../../fixtures/fairness-app';
import { enqueue, many } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

describe('floors with lanes (real Redis)', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it("starts a late floor tenant's job in the next free slot, not behind the flood", async () => {
    const started: Started[] = [];
    moduleRef = await bootFairApp({
      prefix: uniquePrefix('floorlanes'),
      fairness: {
        defaultMinConcurrency: 1,
        window: 20,
        lanes: { now: { share: 0.5 }, bulk: { share: 0.5, jobs: ['bulk'] } },
      },
      concurrency: 2,
      started,
    });
    await enqueue(moduleRef, 'fair', 'flood', many<FairJobData>(60, { ms: 30 }));
    await waitFor(() => started.length >= 2, 'the flood to start');
    const before = started.length;
    await enqueue(moduleRef, 'fair', 'late', many<FairJobData>(3, { ms: 30 }));
    await waitFor(() => started.some((s) => s.tenantId === 'late'), "late's first job", 30_000);
    const first = started.findIndex((s) => s.tenantId === 'late');
    // The flood's jobs that started after late's were added and before late's first: the two
    // slots' next fetches at most (a few more on a loaded machine), not the flood's window.
    expect(started.slice(before, first).length).toBeLessThanOrEqual(4);
  });
});
