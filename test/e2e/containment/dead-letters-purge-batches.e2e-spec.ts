import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { DeadLetters, TenantQueueModule, TenantQueueRegistry } from '../../../lib';
import { DeadLettersScript } from '../../../lib/dead-letters/dead-letters.script';
import { uniquePrefix } from '../../support/redis-url';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { openRedis, TestRedisClient } from '../../support/test-redis';

/**
 * Purging all of a tenant's dead letters was one script call over all of them: with
 * `deadLetterCap: 100000` and 100,000 letters it held Redis 335 ms. It removes 1,000 a call now.
 * A deep page of `list` on one queue read every id up to its end (offset 99,980: one ZREVRANGE of
 * 100,000 ids, 166 ms of Redis, 1 s to answer); it reads the page now.
 */
describe("a tenant's many dead letters: purge goes 1,000 a script call, a page reads its page", () => {
  const prefix = uniquePrefix('dlq-purge');
  let moduleRef: TestingModule;
  let redis: TestRedisClient;

  beforeAll(async () => {
    redis = openRedis();
    @Module({
      imports: [
        ...testRootImports(prefix),
        TenantQueueModule.registerQueue({ name: 'reports', deadLetterCap: 10_000 }),
      ],
    })
    class PurgeModule {}
    moduleRef = await bootTestModule({ imports: [PurgeModule] });
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await moduleRef?.close();
    await redis?.quit();
  });

  /** Records `count` letters of `tenantId` through the store's own write (as a final failure). */
  async function record(tenantId: string, count: number) {
    const letters = moduleRef.get(DeadLetters);
    const definition = moduleRef.get(TenantQueueRegistry).getQueue('reports').definition;
    for (let i = 0; i < count; i += 250) {
      await Promise.all(
        Array.from({ length: Math.min(250, count - i) }, (_, j) => {
          const jobId = `${tenantId}-${i + j}`;
          const failedAt = 1_700_000_000_000 + i + j;
          const json = JSON.stringify({ tenantId, jobId, queue: 'reports', failedAt });
          return letters.script.record(definition, tenantId, jobId, failedAt, json, true);
        }),
      );
    }
  }

  it("removes 2,500 letters in three calls of at most 1,000, and leaves another tenant's", async () => {
    await record('acme', 2500);
    await record('globex', 3);
    const letters = moduleRef.get(DeadLetters);
    expect((await letters.list('acme', { limit: 1 })).total).toBe(2500);
    const client = letters.script.raw;
    const original = client.tqDlqRemove.bind(client);
    const perCall: number[] = [];
    jest.spyOn(client, 'tqDlqRemove').mockImplementation(async (...args: unknown[]) => {
      const removed = await original(...args);
      perCall.push(removed);
      return removed;
    });
    expect(await letters.purge('acme')).toBe(2500);
    expect(perCall).toEqual([1000, 1000, 500]);
    expect((await letters.list('acme')).total).toBe(0);
    const definition = moduleRef.get(TenantQueueRegistry).getQueue('reports').definition;
    const keys = DeadLettersScript.tenantKeys(definition, 'acme');
    expect(await redis.exists(...keys)).toBe(0);
    expect((await letters.list('globex')).total).toBe(3);
  });

  it('lists a deep page of one queue by reading that page only', async () => {
    await record('initech', 2500);
    const letters = moduleRef.get(DeadLetters);
    const ranges = jest.spyOn(letters.script.raw, 'zrevrange');
    const page = await letters.list('initech', { offset: 2400, limit: 50 });
    expect(page.total).toBe(2500);
    // Newest first (each letter failed a millisecond after the one before): letters 99 to 50.
    expect(page.items.map((letter) => letter.jobId)).toEqual(
      Array.from({ length: 50 }, (_, i) => `initech-${99 - i}`),
    );
    // One range of 50 ids, not the 2,450 up to the page's end.
    expect(ranges).toHaveBeenCalledTimes(1);
    const [, start, stop] = ranges.mock.calls[0] as unknown[];
    expect(Number(stop) - Number(start) + 1).toBe(50);
  });
});
