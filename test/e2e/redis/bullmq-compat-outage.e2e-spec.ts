import IORedis from 'ioredis';
import { AppProcess, Fixture } from '../../support/app-process';
import { compiledFixture } from '../../support/processes';
import { hasRedisServer, startRedis, StartedRedis } from '../../support/redis-server';
import { isClusterRun } from '../../support/test-redis';
import { waitFor, waitForProgress } from '../../support/wait';

jest.setTimeout(180_000);

const run = hasRedisServer() && !isClusterRun() ? describe : describe.skip;

const JOBS = 400;

run('a @nestjs/bullmq processor on a tenant queue when its connections drop (real process)', () => {
  let redis: StartedRedis | undefined;
  let app: AppProcess | undefined;
  let fixture: Fixture;

  beforeAll(async () => {
    fixture = await compiledFixture('bullmq-outage-app.ts');
  }, 60_000);

  afterAll(async () => {
    app?.kill();
    await redis?.stop();
  });

  // Its worker once ran on the producer's connection (no offline queue): while that connection
  // was down each fetch failed at once, BullMQ fetched again without yielding, and the process
  // froze (no timer, no reconnect) until it ran out of memory.
  it('keeps its event loop turning mid-backlog and runs every job in its tenant once Redis answers again', async () => {
    redis = await startRedis();
    app = new AppProcess(fixture, {
      REDIS_PORT: String(redis.port),
      TQ_PREFIX: 'outage',
      JOBS: String(JOBS),
    });
    const ran = () => new Set(app!.events.filter((e) => 'ran' in e).map((e) => e.ran)).size;
    const beats = () => app!.events.filter((e) => 'beat' in e).length;
    await app.waitEvent('queued', 'the backlog to be queued');
    await waitFor(() => ran() >= 40, 'the worker to be mid-backlog', 60_000);

    // Every connection of the app drops at once, mid-backlog.
    const admin = new IORedis({ host: '127.0.0.1', port: redis.port, lazyConnect: true });
    await admin.connect();
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
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
});
