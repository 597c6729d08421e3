import { AppProcess, Fixture } from '../../support/app-process';
import { compiledFixture } from '../../support/processes';
import { freePort, hasRedisServer, startRedis, StartedRedis } from '../../support/redis-server';
import { isClusterRun } from '../../support/test-redis';

jest.setTimeout(240_000);

const run = hasRedisServer() && !isClusterRun() ? describe : describe.skip;

/**
 * How long a process whose boot failed may take to end by itself: what the module opened is
 * closed within its shutdown bound (3 s here), plus a loaded 2-core machine's slack.
 */
const EXIT_WITHIN_MS = 15_000;

run('a boot that fails and is caught: the process ends by itself (real processes)', () => {
  const apps: AppProcess[] = [];
  let redis: StartedRedis;
  let fixture: Fixture;

  beforeAll(async () => {
    fixture = await compiledFixture('redis-down-app.ts');
    redis = await startRedis();
  }, 60_000);

  afterAll(async () => {
    apps.forEach((app) => app.kill());
    await redis?.stop();
  });

  /** Boots the app with CATCH_BOOT (no process.exit), waits for the failure and the exit. */
  async function failedBoot(port: number, env: Record<string, string>) {
    const app = new AppProcess(fixture, {
      REDIS_PORT: String(port),
      TQ_PREFIX: `fail${port}-${apps.length}`,
      SHUTDOWN_MS: '3000',
      CATCH_BOOT: '1',
      ...env,
    });
    apps.push(app);
    const failed = await app.waitEvent('bootError', 'the failed boot');
    const at = Date.now();
    const exit = await Promise.race([
      app.exited,
      new Promise<undefined>((done) => setTimeout(() => done(undefined), EXIT_WITHIN_MS)),
    ]);
    app.kill();
    return { failed, exit, after: Date.now() - at, output: app.output };
  }

  it("redisAtBoot: 'required' with Redis down", async () => {
    const { failed, exit, output } = await failedBoot(await freePort(), {
      REDIS_AT_BOOT: 'required',
    });
    expect(failed.bootError).toBe('RedisUnavailableAtBootError');
    expect([exit?.code, output.slice(-2000)]).toEqual([0, output.slice(-2000)]);
  });

  it('a @TenantProcessor option the module refuses at bootstrap (concurrency 0), Redis up', async () => {
    const { failed, exit, output } = await failedBoot(redis.port, { CONCURRENCY: '0' });
    expect(failed.bootError).toBe('InvalidTenantQueueOptionsError');
    expect([exit?.code, output.slice(-2000)]).toEqual([0, output.slice(-2000)]);
  });

  it('a @TenantCron the module refuses at init (a cron it cannot parse), Redis up', async () => {
    const { failed, exit, output } = await failedBoot(redis.port, { CRON: '99 * * * *' });
    expect(failed.bootError).toBe('InvalidScheduleError');
    expect([exit?.code, output.slice(-2000)]).toEqual([0, output.slice(-2000)]);
  });

  it('a queue registered twice with other options (refused while the providers are built), Redis up', async () => {
    const { failed, exit, output } = await failedBoot(redis.port, { CLASH: '1' });
    expect(failed.bootError).toBe('InvalidTenantQueueOptionsError');
    expect([exit?.code, output.slice(-2000)]).toEqual([0, output.slice(-2000)]);
  });

  // Nest runs no shutdown hook after a failed init: an app whose own step failed after the
  // module started (workers, crons) closes it, as after any failed init.
  it("the app's own onApplicationBootstrap throws after the module started: app.close() ends it, Redis up", async () => {
    const { failed, exit, output } = await failedBoot(redis.port, {
      FAIL_AT: 'bootstrap',
      CATCH_BOOT: 'close',
    });
    expect(failed.message).toBe('the app refused to start');
    expect([exit?.code, output.slice(-2000)]).toEqual([0, output.slice(-2000)]);
  });
});
