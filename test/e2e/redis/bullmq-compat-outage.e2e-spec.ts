import IORedis from 'ioredis';
import { AppProcess, Fixture } from '../../support/app-process';
import { compiledFixture } from '../../support/processes';
import { hasRedisServer, startRedis, StartedRedis } from '../../support/redis-server';
import { isClusterRun } from '../../support/test-redis';
import { sleep, waitFor, waitForProgress } from '../../support/wait';

jest.setTimeout(180_000);

const run = hasRedisServer() && !isClusterRun() ? describe : describe.skip;

const JOBS = 400;
/** The fixture's `shutdownTimeoutMs`. */
const SHUTDOWN_MS = 1000;
/** A loaded 2-core machine: what a process needs beyond the bound to exit. */
const EXIT_SLACK_MS = 12_000;

run('a @nestjs/bullmq processor on a tenant queue when its connections drop (real process)', () => {
  const servers: StartedRedis[] = [];
  const apps: AppProcess[] = [];
  let fixture: Fixture;

  beforeAll(async () => {
    fixture = await compiledFixture('bullmq-outage-app.ts');
  }, 60_000);

  afterAll(async () => {
    apps.forEach((app) => app.kill());
    await Promise.all(servers.map((server) => server.stop()));
  });

  async function boot(prefix: string): Promise<{ redis: StartedRedis; app: AppProcess }> {
    const redis = await startRedis();
    servers.push(redis);
    const app = new AppProcess(fixture, {
      REDIS_PORT: String(redis.port),
      TQ_PREFIX: prefix,
      JOBS: String(JOBS),
    });
    apps.push(app);
    await app.waitEvent('queued', 'the backlog to be queued');
    await waitFor(
      () => app.events.filter((e) => 'ran' in e).length >= 40,
      'the worker to be mid-backlog',
      60_000,
    );
    return { redis, app };
  }

  // Its worker once ran on the producer's connection (no offline queue): while that connection
  // was down each fetch failed at once, BullMQ fetched again without yielding, and the process
  // froze (no timer, no reconnect) until it ran out of memory.
  it('keeps its event loop turning mid-backlog and runs every job in its tenant once Redis answers again', async () => {
    const { redis, app } = await boot('outage');
    const ran = () => new Set(app.events.filter((e) => 'ran' in e).map((e) => e.ran)).size;
    const beats = () => app.events.filter((e) => 'beat' in e).length;

    // Every connection of the app drops at once, mid-backlog.
    const admin = new IORedis({ host: '127.0.0.1', port: redis.port, lazyConnect: true });
    await admin.connect();
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await admin.quit();
    const beatsAtDrop = beats();
    await waitFor(
      () => beats() >= beatsAtDrop + 10,
      "the app's timer to keep firing after its connections dropped",
      30_000,
    );

    await waitForProgress(ran, JOBS, 'the backlog after the connections came back');
    for (const event of app.events.filter((e) => 'ran' in e)) {
      expect(event.tenant).toBe(String(event.ran).split('-')[0]);
    }
    expect(app.output).not.toMatch(/Stream isn't writeable/);
    // The adopted worker's connection errors are the module's one line per outage, not BullMQ's
    // raw print of each.
    expect(app.output).not.toMatch(/^Error: /m);
  });

  // @nestjs/bullmq closes its workers and queue events again in its own shutdown hook, with no
  // bound; while Redis is away that close never settles (their last commands wait for a
  // connection the module's bounded close had dropped), and the app never exited.
  it('ends within the shutdown bound on SIGTERM while Redis is down mid-backlog', async () => {
    const { redis, app } = await boot('outage-close');
    await redis.stop();
    const bound = SHUTDOWN_MS + EXIT_SLACK_MS;
    const took = await Promise.race([app.terminate(), sleep(bound).then(() => Infinity)]);
    expect(took).toBeLessThan(bound);
  });
});
