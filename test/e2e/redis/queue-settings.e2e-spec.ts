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
    // The later process sees the earlier one's settings at its boot. (Nest's logger is one per
    // process: the last app's takes both apps' lines.)
    const warned = () => [...fairLog.warns, ...plainLog.warns];
    await waitFor(() => warned().length === 1, 'the warning');
    expect(warned()[0]).toContain(
      'queue "media" runs with other fairness settings in another process on this Redis ' +
        '(there: {"maxConsecutive":3}; here: off)',
    );
    expect(warned()[0]).toContain('Give every process the same registerQueue options');
    // The earlier one at its next check (every 30 s; called here), once.
    expect(await fair.get(QueueSettingsCheck).check()).toEqual(['media']);
    expect(warned()[1]).toContain('(there: off; here: {"maxConsecutive":3})');
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
