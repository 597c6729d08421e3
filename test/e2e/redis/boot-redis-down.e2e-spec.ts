import { AppProcess, Fixture } from '../../support/app-process';
import { compiledFixture } from '../../support/processes';
import { freePort, hasRedisServer, startRedis, StartedRedis } from '../../support/redis-server';
import { isClusterRun } from '../../support/test-redis';
import { sleep, waitFor } from '../../support/wait';

jest.setTimeout(240_000);

const run = hasRedisServer() && !isClusterRun() ? describe : describe.skip;

/** Bound of the app's shutdown in these tests (`shutdownTimeoutMs`). */
const SHUTDOWN_MS = 1000;
/** A loaded 2-core machine: what a process needs beyond the bound to exit. */
const EXIT_SLACK_MS = 12_000;

run('an app with a @TenantCron and workers, booted while Redis is down (real processes)', () => {
  const apps: AppProcess[] = [];
  let redis: StartedRedis | undefined;
  let fixture: Fixture;

  beforeAll(async () => {
    // Plain JavaScript, compiled with the library once: each app boots without ts-node.
    fixture = await compiledFixture('redis-down-app.ts');
  }, 60_000);

  afterAll(async () => {
    apps.forEach((app) => app.kill());
    await redis?.stop();
  });

  function boot(port: number, env: Record<string, string> = {}): AppProcess {
    const app = new AppProcess(fixture, {
      REDIS_PORT: String(port),
      TQ_PREFIX: `boot${port}`,
      SHUTDOWN_MS: String(SHUTDOWN_MS),
      ...env,
    });
    apps.push(app);
    return app;
  }

  it('listens, answers an enqueue with 503 + Retry-After, and runs the cron and the workers once Redis is up', async () => {
    const port = await freePort();
    const app = boot(port);
    const { listening } = await app.waitEvent('listening', 'the HTTP port while Redis is down');
    const url = `http://127.0.0.1:${listening}/uploads`;

    const refused = await fetch(url, { method: 'POST' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({
      statusCode: 503,
      error: 'EnqueueUnavailableError',
      message: expect.stringContaining('NOT written'),
    });

    redis = await startRedis([], port);
    await waitFor(
      async () => (await fetch(url, { method: 'POST' })).status === 201,
      'an enqueue accepted once Redis is up',
      60_000,
    );
    await app.waitEvent('ran', 'the worker running the job', 60_000);
    expect(app.event('ran')).toEqual({ ran: 'cat.png', tenant: 'acme' });
    // The cron runs every minute of the fixture's scheduler clock (3 s): its driver was stored
    // once Redis answered.
    await app.waitEvent('cron', 'the @TenantCron firing for acme', 150_000);
    expect(app.event('cron')).toEqual({ cron: 'acme' });

    // One line per connection for the outage, never one per retry.
    const lines = app.outageLines();
    expect(lines.size).toBeGreaterThan(0);
    for (const [name, count] of lines) expect([name, count]).toEqual([name, 1]);
    // Never up before: "not connected yet", and "connected" once it is (not "lost", "back").
    expect(app.output).not.toMatch(/Redis connection "[^"]+" lost/);
    expect(app.output).toMatch(/Redis connection "[^"]+" connected after \d+ ms/);
    expect(app.output).not.toMatch(/worker [\w-]+: connect ECONNREFUSED/);
    // The drivers were written once Redis answered; the check for lost ones starts after that
    // write, so it does not find them missing and warn.
    expect(app.output).toMatch(/@TenantCron "[^"]+" scheduled/);
    expect(app.output).not.toMatch(/its driver was missing from Redis/);

    // Redis goes away again while the app runs: SIGTERM still ends it within the bound.
    await redis.stop();
    redis = undefined;
    const took = await app.terminate();
    expect(took).toBeLessThan(SHUTDOWN_MS + EXIT_SLACK_MS);
  });

  it('SIGTERM while Redis was never up: the app exits within the shutdown bound', async () => {
    const app = boot(await freePort());
    await app.waitEvent('listening', 'the HTTP port while Redis is down');
    const took = await app.terminate();
    expect(took).toBeLessThan(SHUTDOWN_MS + EXIT_SLACK_MS);
  });

  // A fair gate's last tick and release calls wait for Redis like any command: its close is
  // bounded like the workers' (it once kept app.close() pending for good).
  it('a fair queue: SIGTERM once Redis went away, or while it was never up, ends the app within the bound', async () => {
    const port = await freePort();
    const server = await startRedis();
    const app = boot(server.port, { FAIR: '1', TQ_PREFIX: `bootfair${port}` });
    const { listening } = await app.waitEvent('listening', 'the HTTP port');
    expect((await fetch(`http://127.0.0.1:${listening}/uploads`, { method: 'POST' })).status).toBe(
      201,
    );
    await app.waitEvent('ran', 'the worker running the fair job', 60_000);
    await server.stop();
    // A visibility flush (every second) waits for Redis meanwhile; the bound cuts it at SIGTERM.
    await sleep(1500);
    expect(await app.terminate()).toBeLessThan(SHUTDOWN_MS + EXIT_SLACK_MS);
    // Said once as a warning, not as each write failing when the connections close.
    expect(app.output).toMatch(
      /The last visibility counts .* were not written within shutdownTimeoutMs \(1000 ms\)/,
    );
    expect(app.output).not.toMatch(/visibility flush of/);
    // Nothing of a shutdown with Redis away is an error: each step cut is a warning.
    expect(app.output).not.toMatch(/\bERROR\b/);
    // The bound as configured, not the part of it the steps before had left.
    expect(app.output).not.toMatch(/shutdownTimeoutMs \(0 ms\)/);

    const never = boot(port, { FAIR: '1' });
    await never.waitEvent('listening', 'the HTTP port while Redis is down');
    expect(await never.terminate()).toBeLessThan(SHUTDOWN_MS + EXIT_SLACK_MS);
  });

  it("redisAtBoot: 'required' fails the boot fast with RedisUnavailableAtBootError", async () => {
    const started = Date.now();
    const app = boot(await freePort(), { REDIS_AT_BOOT: 'required' });
    const failed = await app.waitEvent('bootError', 'the failed boot');
    expect(failed).toMatchObject({
      bootError: 'RedisUnavailableAtBootError',
      message: expect.stringContaining("redisAtBoot: 'optional'"),
    });
    // The reason Redis gave (the port refused), not ioredis' "Connection is closed.".
    expect(failed.message).toMatch(/ECONNREFUSED/);
    expect(app.event('listening')).toBeUndefined();
    await app.exited;
    expect(Date.now() - started).toBeLessThan(120_000);
  });
});
