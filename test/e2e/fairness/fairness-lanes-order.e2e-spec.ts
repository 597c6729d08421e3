import { TestingModule } from '@nestjs/testing';
import { Started, bootFairApp } from '../../fixtures/fairness-app';
import { enqueue, many } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

/**
 * Lanes set BullMQ priorities: 1 within a lane's share of the worker slots, 2 beyond it. A job
 * admitted at 1 must not overtake older jobs of its own lane waiting at 2: the lane's oldest
 * waiting job moves up instead, so a lane's jobs start in admission order.
 */
describe('lanes: jobs of one lane start in admission order', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('keeps at most maxConsecutive of one tenant in a row, and each tenant in its own order, in start order', async () => {
    const started: Started[] = [];
    const prefix = uniquePrefix();
    moduleRef = await bootFairApp({
      prefix,
      fairness: {
        maxConsecutive: 8,
        lanes: { interactive: { share: 0.5 }, bulk: { share: 0.5 } },
      },
      concurrency: 1,
      started,
    });
    const a = await enqueue(moduleRef, 'fair', 'A', many(80, { ms: 2 }));
    const b = await enqueue(moduleRef, 'fair', 'B', many(80, { ms: 2 }));
    await waitFor(() => started.length === 160, 'every job to start', 60_000);
    const order = started.map((s) => s.tenantId).join('');
    // Before the fix the last ~16 of each tenant ran as two blocks (admitted early at priority 2,
    // overtaken by every later job at 1): "...ABAB" + "B".repeat(16) + "A".repeat(15) + "A".
    const firstB = order.indexOf('B');
    const lastA = order.lastIndexOf('A');
    const both = order.slice(firstB, lastA + 1);
    const longest = Math.max(...(both.match(/A+|B+/g) ?? ['']).map((run) => run.length));
    expect(longest).toBeLessThanOrEqual(8);
    // Each tenant's jobs start in the order they were enqueued.
    for (const [tenant, jobs] of [
      ['A', a],
      ['B', b],
    ] as const) {
      const ids = started.filter((s) => s.tenantId === tenant).map((s) => s.jobId);
      expect(ids).toEqual(jobs.map((job) => job.id));
    }
    // The lane's list of jobs waiting at priority 2 holds nothing still waiting.
    const redis = openRedis();
    try {
      const keys = await redis.keys(`{${prefix}:fair}:~fair:p2:*`);
      for (const key of keys) {
        const ids = await redis.lrange(key, 0, -1);
        const scores = ids.length
          ? await redis.zmscore(`{${prefix}:fair}:fair:prioritized`, ...ids)
          : [];
        expect(scores.filter((score) => score !== null)).toEqual([]);
      }
    } finally {
      redis.disconnect();
    }
  });
});
