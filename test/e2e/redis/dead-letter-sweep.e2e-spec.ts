import { Logger } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Worker } from 'bullmq';
import { DeadLetters, TenantQueueModule, TenantQueueRegistry } from '../../../lib';
import { DeadLetterWorkerPlugin } from '../../../lib/dead-letters/dead-letter.plugin';
import { DeadLettersScript } from '../../../lib/dead-letters/dead-letters.script';
import { TenantQueueRedis } from '../../../lib/core/redis/tenant-queue.redis';
import { redisConnection, uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(30_000);

describe('dead-letter sweep past an unreadable failed job', () => {
  let app: TestingModule;

  beforeAll(async () => {
    app = await bootTestModule({
      imports: [
        ...testRootImports(uniquePrefix('sweep')),
        TenantQueueModule.registerQueue({ name: 'sweep', attempts: 1 }),
      ],
    });
  });

  afterAll(async () => {
    await app?.close();
  });

  it('skips the corrupt job, logs it once, counts it, and dead-letters the others', async () => {
    const queue = app.get(TenantQueueRegistry).getQueue('sweep');
    const ids: string[] = [];
    for (const tenant of ['acme', 'globex', 'acme', 'initech']) {
      ids.push((await queue.addForTenant(tenant, 'work', { n: ids.length })).id);
    }
    // A bare BullMQ worker fails them: no module listener, so only the sweep can record them.
    const bare = new Worker('sweep', async () => Promise.reject(new Error('boom')), {
      connection: redisConnection(),
      prefix: queue.bullQueue.opts.prefix,
    });
    try {
      await waitFor(
        async () => (await queue.bullQueue.getJobCountByTypes('failed')) === ids.length,
        'four failed jobs',
      );
    } finally {
      await bare.close();
    }
    const redis = app.get(TenantQueueRedis).client;
    const definition = queue.definition;
    await redis.hset(DeadLettersScript.jobKey(definition, ids[1]), 'data', '{"_tenant": {oops');
    await redis.hset(DeadLettersScript.jobKey(definition, ids[3]), 'opts', '[not json');

    const plugin = app.get(DeadLetterWorkerPlugin);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      expect(await plugin.sweep(definition)).toBe(2);
      expect(await plugin.sweep(definition)).toBe(0);
      const unreadable = warn.mock.calls
        .map((call) => String(call[0]))
        .filter((message) => /skipped failed job/.test(message));
      expect(unreadable).toHaveLength(2);
      expect(unreadable[0]).toContain(ids[1]);
      expect(unreadable[1]).toContain(ids[3]);
    } finally {
      warn.mockRestore();
    }
    expect(plugin.unreadable('sweep')).toBe(2);
    const deadLetters = app.get(DeadLetters);
    expect((await deadLetters.list('acme')).items.map((l) => l.jobId).sort()).toEqual(
      [ids[0], ids[2]].sort(),
    );
    expect((await deadLetters.list('globex')).total).toBe(0);
    expect((await deadLetters.list('initech')).total).toBe(0);
  });
});
