import IORedis from 'ioredis';
import { AppProcess, Fixture } from '../../support/app-process';
import { compiledFixture } from '../../support/processes';
import { StartedRedis, hasRedisServer, startRedis } from '../../support/redis-server';
import { isClusterRun } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

jest.setTimeout(120_000);

const run = hasRedisServer() && !isClusterRun() ? describe : describe.skip;

/**
 * An app whose Redis user may not run a command BullMQ needs (an ACL without INFO, which BullMQ
 * runs on each connection it opens). BullMQ's worker retries a refused fetch at once, with no
 * wait and no round trip to Redis: before, the process logged the refusal ~2,800 times a second
 * and its event loop never turned again (no HTTP answer, no timer).
 */
run('a Redis ACL user without a command BullMQ needs (real process)', () => {
  let redis: StartedRedis;
  let fixture: Fixture;
  const apps: AppProcess[] = [];

  beforeAll(async () => {
    fixture = await compiledFixture('redis-down-app.ts');
    redis = await startRedis();
    const admin = new IORedis(redis.port, '127.0.0.1');
    await admin.call('ACL', 'SETUSER', 'app', 'on', '>secret', '~*', '&*', '+@all', '-info');
    await admin.quit();
  }, 60_000);

  afterAll(async () => {
    apps.forEach((app) => app.kill());
    await Promise.all(apps.map((app) => app.exited));
    await redis?.stop();
  });

  it('logs the refusal once, naming the permission and the fix, pauses the worker, keeps serving, and its health check says down', async () => {
    const app = new AppProcess(fixture, {
      REDIS_PORT: String(redis.port),
      REDIS_USER: 'app',
      REDIS_PASSWORD: 'secret',
      TQ_PREFIX: `acl${redis.port}`,
      HEALTH: '1',
    });
    apps.push(app);
    const refusals = () => app.output.match(/NOPERM/g)?.length ?? 0;
    await waitFor(() => refusals() > 0, 'the refusal to be logged', 60_000);
    const { listening } = await app.waitEvent('listening', 'the HTTP port', 30_000);
    // The event loop turns: the app answers (its enqueue is refused by Redis too).
    // ...and its enqueue is refused with the module's typed error, naming the permission (before:
    // Redis's raw ReplyError, a 500 "Internal server error").
    for (let i = 0; i < 3; i++) {
      const answer = await fetch(`http://127.0.0.1:${listening}/uploads`, { method: 'POST' });
      expect(answer.status).toBe(503);
      expect(await answer.json()).toMatchObject({
        error: 'EnqueueUnavailableError',
        message: expect.stringMatching(
          /Redis refused the command \(NOPERM .*ACL user lacks a permission.*NOT written.*ACL SETUSER <user> \+info/,
        ),
      });
    }
    // Paused by the module, not by an operator: it takes no job until a restart, so an
    // orchestrator's probe must see it (before: 200, `media: 'paused'`, status up).
    const health = await fetch(`http://127.0.0.1:${listening}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      status: 'error',
      error: { tenantQueue: { status: 'down', redis: 'up', workers: { media: 'refused' } } },
    });
    const lines = app.output.split('\n').filter((line) => line.includes('worker media:'));
    expect(lines).toEqual([
      expect.stringMatching(
        /ERROR.*worker media: Redis refused this worker's command \(NOPERM .*'info'.*\).*ACL user .*The worker is paused.*ACL SETUSER <user> \+info/,
      ),
    ]);
  });
});
