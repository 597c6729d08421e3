import { ChildProcess, spawn } from 'node:child_process';
import { Server, createServer } from 'node:net';
import { join } from 'node:path';
import IORedis from 'ioredis';
import { REPO_ROOT } from '../../support/readme-blocks';
import { redisAnswers } from '../../../sample-app/redis-answers';
import { StartedRedis, freePort, startRedis } from '../../support/redis-server';
import { waitFor } from '../../support/wait';

/** `npm run sample` (sample-app/start.js) on `port`, with `REDIS_URL`; its output and exit code. */
async function runSample(port: number, redisUrl: string): Promise<{ code: number; out: string }> {
  const output: string[] = [];
  const sample: ChildProcess = spawn(process.execPath, [join(REPO_ROOT, 'sample-app/start.js')], {
    cwd: REPO_ROOT,
    // As a user runs it: on this repository's install, without a variant run's NODE_OPTIONS hook.
    env: {
      ...process.env,
      PORT: String(port),
      REDIS_URL: redisUrl,
      NO_COLOR: '1',
      NODE_OPTIONS: undefined,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  sample.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  sample.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const code = await new Promise<number>((resolve) => {
    const timer = setTimeout(() => sample.kill('SIGKILL'), 90_000);
    sample.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode ?? -1);
    });
  });
  return { code, out: output.join('') };
}

/**
 * The README's first command on a machine where port 3000 is taken (another dev server, another
 * sample): the sample says so and how to pick another port, and leaves nothing running or written.
 */
describe('npm run sample on a port already in use', () => {
  let busy: Server;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(port, '127.0.0.1', resolve));
  });

  afterAll(() => new Promise((resolve) => busy.close(resolve)));

  it('stops the redis-server it started, and says to set PORT', async () => {
    // Nothing answers at REDIS_URL: the sample starts a private redis-server.
    const { code, out } = await runSample(port, `redis://127.0.0.1:${await freePort()}`);
    const started = /Started a private redis-server at (redis:\/\/\S+)/.exec(out)?.[1];
    expect(started).toBeDefined();
    try {
      await waitFor(async () => !(await redisAnswers(started!)), `${started} to stop`, 5_000);
    } catch (error) {
      // Left running: stop it here, so a failing run leaves no redis-server behind either.
      const leaked = new IORedis(started!, { retryStrategy: () => null });
      await leaked.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
      leaked.disconnect();
      throw error;
    }
    expect([code, out]).toEqual([1, expect.stringContaining(`Port ${port} is in use`)]);
    expect(out).toContain(`PORT=${port + 1} npm run sample`);
  }, 120_000);

  describe('on a Redis it did not start', () => {
    let redis: StartedRedis;

    beforeAll(async () => {
      redis = await startRedis();
    });

    afterAll(() => redis?.stop());

    it('removes the keys its boot wrote (its schedules), as on Ctrl-C', async () => {
      const { code, out } = await runSample(port, redis.url);
      const client = new IORedis(redis.url);
      try {
        expect(await client.keys('*tq-sample-*')).toEqual([]);
      } finally {
        client.disconnect();
      }
      expect([code, out]).toEqual([1, expect.stringContaining(`Port ${port} is in use`)]);
    }, 120_000);
  });
});
