import { INestApplication, LoggerService, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TenantFairnessOptions, TenantQueueModule } from '../../../lib';
import { QueueSettingsCheck } from '../../../lib/core/queues/queue-settings.check';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { MediaProcessor, WarnLog } from '../../support/warn-log';
import { openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

/** An app with queue "media" under `prefix`, with the given fairness (none: `undefined`). */
async function boot(
  prefix: string,
  fairness: TenantFairnessOptions | undefined,
  logger: LoggerService,
) {
  @Module({
    imports: [
      ...testRootImports(prefix),
      TenantQueueModule.registerQueue({ name: 'media', fairness }),
    ],
    providers: [MediaProcessor],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger });
  await app.init();
  return app;
}

/**
 * Two processes on one Redis that run a queue with different fairness settings (a rolling deploy
 * that turns fairness on, two apps configured apart) share BullMQ's queue: each warns.
 */
describe('processes running one queue with different fairness settings', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it('each warns once, naming both settings and the fix', async () => {
    const prefix = uniquePrefix();
    const fairLog = new WarnLog('other fairness settings');
    const plainLog = new WarnLog('other fairness settings');
    const fair = await boot(prefix, { maxConsecutive: 3 }, fairLog);
    apps.push(fair);
    const plain = await boot(prefix, undefined, plainLog);
    apps.push(plain);
    // Each check (at boot, then every 30 s; called here too, as the boot ones run on their own)
    // writes this process's settings and reads the others'. (Nest's logger is one per process:
    // the last app's takes both apps' lines.)
    // Awaited in turn, so each reads what the other wrote (the boot checks run on two
    // connections, in either order).
    await fair.get(QueueSettingsCheck).check();
    await plain.get(QueueSettingsCheck).check();
    await fair.get(QueueSettingsCheck).check();
    const warned = () => [...fairLog.warns, ...plainLog.warns];
    await waitFor(() => warned().length === 2, 'both warnings');
    const start =
      'queue "media" runs with other fairness settings in another process on this Redis ';
    expect(warned().sort()).toEqual([
      expect.stringContaining(`${start}(there: off; here: {"maxConsecutive":3})`),
      expect.stringContaining(`${start}(there: {"maxConsecutive":3}; here: off)`),
    ]);
    expect(warned()[0]).toContain('Give every process the same registerQueue options');
    // Once per queue and other settings.
    expect(await fair.get(QueueSettingsCheck).check()).toEqual([]);
    expect(await plain.get(QueueSettingsCheck).check()).toEqual([]);
    expect(warned()).toHaveLength(2);
  });

  it('no warning for the same settings in any key order, nor for settings no process runs now', async () => {
    const prefix = uniquePrefix();
    const log = new WarnLog('other fairness settings');
    const first = await boot(prefix, { maxConsecutive: 3, tickMs: 500 }, log);
    const second = await boot(prefix, { tickMs: 500, maxConsecutive: 3 }, log);
    apps.push(second);
    expect(await second.get(QueueSettingsCheck).check()).toEqual([]);
    // A process that stopped long ago (its settings last seen 10 minutes back): no warning.
    await first.close();
    const redis = openRedis();
    try {
      const key = `{${prefix}:media}:~settings`;
      expect(await redis.hlen(key)).toBe(1);
      await redis.hset(key, 'gone-process-digest', `${Date.now() - 600_000} off`);
    } finally {
      redis.disconnect();
    }
    const third = await boot(prefix, { maxConsecutive: 3, tickMs: 500 }, log);
    apps.push(third);
    expect(await third.get(QueueSettingsCheck).check()).toEqual([]);
    expect(log.warns).toEqual([]);
  });
});
