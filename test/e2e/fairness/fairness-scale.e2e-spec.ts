import { TestingModule } from '@nestjs/testing';
import { TenantQueueRedis } from '../../../lib/core/redis/tenant-queue.redis';
import { FairJobData, Started, bootFairApp } from '../../fixtures/fairness-app';
import { enqueue, many } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { waitForProgress } from '../../support/wait';

describe('fair gate at scale (real Redis)', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  // Turns at add() (the default: BullMQ's prioritized set holds the turns) and every job through
  // the gate (priorityByTurn: false: its ready set holds them).
  it.each([true, false])(
    'works with 10,000 active tenants (priorityByTurn: %s)',
    async (priorityByTurn) => {
      const prefix = uniquePrefix();
      const fairness = { priorityByTurn };
      const producer = await bootFairApp({ prefix, fairness, concurrency: 0 });
      try {
        const tenants = Array.from({ length: 10_000 }, (_, i) => `t${i}`);
        for (let i = 0; i < tenants.length; i += 500) {
          await Promise.all(
            tenants
              .slice(i, i + 500)
              .map((t) => enqueue(producer, 'fair', t, many<FairJobData>(2))),
          );
        }
        const redis = producer.get(TenantQueueRedis).client;
        if (priorityByTurn) {
          expect(await redis.zcard(`{${prefix}:fair}:fair:prioritized`)).toBe(20_000);
        } else {
          expect(await redis.zcard(`{${prefix}:fair}:~fair:ready`)).toBeGreaterThan(9_900);
        }
        const started: Started[] = [];
        moduleRef = await bootFairApp({ prefix, fairness, concurrency: 20, started });
        // A behaviour test, not a speed test (7-9 s alone here, 30 s late in a full run, slower on a
        // loaded machine): it fails when the jobs stop moving, not when they are slow.
        await waitForProgress(() => started.length, 20_000, 'jobs started');
        expect(new Set(started.map((s) => s.tenantId)).size).toBe(10_000);
        expect(new Set(started.map((s) => s.jobId)).size).toBe(20_000);
        // Turns: every tenant ran its first job before any tenant ran its second.
        const firstHalf = new Set(started.slice(0, 9_000).map((s) => s.tenantId));
        expect(firstHalf.size).toBeGreaterThan(8_900);
      } finally {
        await producer.close();
      }
    },
    300_000,
  );
});
