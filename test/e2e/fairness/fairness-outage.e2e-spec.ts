import { TestingModule } from '@nestjs/testing';
import { QueueEvents } from 'bullmq';
import {
  InMemoryTenantDirectory,
  SlowLaneEvent,
  TenantFairness,
  TenantQueueRegistry,
} from '../../../lib';
import { bootFairApp } from '../../fixtures/fairness-app';
import { FlakyTenantDirectory } from '../../support/guard-fixtures';
import { enqueue, many } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { testConnection } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

/**
 * The directory (our own infrastructure) failing while a job is guarded is no failure of the
 * tenant's: its jobs fail (and are retried by BullMQ), but the slow lane does not count them.
 */
describe('a directory outage and the slow lane', () => {
  let moduleRef: TestingModule | undefined;
  let events: QueueEvents | undefined;
  afterEach(async () => {
    await events?.close();
    await moduleRef?.close();
    moduleRef = events = undefined;
  });

  for (const [name, extra] of [
    ['through the gate', {}],
    ['priority by turn (jobs that skip the gate)', { priorityByTurn: true }],
  ] as const) {
    it(`does not put a tenant in the slow lane for the directory's failures: ${name}`, async () => {
      const directory = new FlakyTenantDirectory(
        new InMemoryTenantDirectory([{ id: 'down' }, { id: 'broken' }]),
      );
      directory.failNext('down', 1_000_000);
      moduleRef = await bootFairApp({
        prefix: uniquePrefix('outage'),
        fairness: { ...extra, tickMs: 100, slowLane: { failureThreshold: 3, windowMs: 60_000 } },
        concurrency: 2,
        directory,
      });
      const bull = moduleRef.get(TenantQueueRegistry).getQueue('fair').bullQueue;
      // From the stream's start (this test's prefix is its own): a reader at '$' misses the
      // failures that land before its first read, as it did on a loaded CI host.
      events = new QueueEvents('fair', {
        connection: testConnection(),
        prefix: bull.opts.prefix,
        lastEventId: '0',
      });
      await events.waitUntilReady();
      const failed: string[] = [];
      events.on('failed', ({ failedReason }) => failed.push(failedReason));
      const fairness = moduleRef.get(TenantFairness);
      const lane: SlowLaneEvent[] = [];
      fairness.onSlowLane((event) => lane.push(event));

      await enqueue(moduleRef, 'fair', 'down', many(5), { attempts: 1 });
      await waitFor(() => failed.length === 5, "down's five jobs to fail");
      expect(failed).toEqual(failed.map(() => expect.stringMatching(/directory/i)));
      // A tenant whose own jobs fail enters the lane on the same queue: its failures are released
      // after down's, so by then down's would have been counted.
      await enqueue(moduleRef, 'fair', 'broken', many(4, { fail: true }), { attempts: 1 });
      await waitFor(
        async () => (await fairness.getTenant('fair', 'broken')).slowLane,
        'broken in the slow lane',
      );
      const down = await fairness.getTenant('fair', 'down');
      expect({ slowLane: down.slowLane, recentFailures: down.recentFailures }).toEqual({
        slowLane: false,
        recentFailures: 0,
      });
      expect(lane.map((e) => `${e.tenantId} ${e.state}`)).toEqual(['broken entered']);
    });
  }
});
