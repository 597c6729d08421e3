import { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import { TenantQueueModule } from '../../../lib';
import { captureWarningsAndErrors } from '../../support/collecting-logger';
import { StartedRedis, startRedis } from '../../support/redis-server';
import { uniquePrefix } from '../../support/redis-url';
import { isClusterRun } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

const run = isClusterRun() ? describe.skip : describe;

/** An app with a fair queue on `redis`; the lines it logs at warn and error. */
async function boot(
  redis: StartedRedis,
): Promise<{ app: INestApplicationContext; lines: string[] }> {
  const lines = captureWarningsAndErrors();
  const moduleRef = await Test.createTestingModule({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({ connection: { url: redis.url }, prefix: uniquePrefix('cmds') }),
      TenantQueueModule.registerQueue({ name: 'fair', fairness: {} }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, lines };
}

/**
 * The fair gate's scripts use Redis 6.2's HRANDFIELD and LPOP with a count; BullMQ itself runs on
 * 5.0. A server without them (here HRANDFIELD disabled with rename-command, as a 6.0 server lacks
 * it) is named at boot, with the version and what to do, instead of only the scripts' "Unknown
 * Redis command called from script" at every tick.
 */
run('a fair queue on a Redis without the commands its scripts use', () => {
  let redis: StartedRedis | undefined;
  let app: INestApplicationContext | undefined;

  afterEach(async () => {
    await app?.close();
    await redis?.stop();
    jest.restoreAllMocks();
  });

  it('says at boot which command is missing and that fair queues need Redis 6.2', async () => {
    redis = await startRedis(['--rename-command', 'HRANDFIELD', '']);
    const booted = await boot(redis);
    app = booted.app;
    const said = () => booted.lines.filter((line) => line.includes('which the fair queues'));
    await waitFor(() => said().length > 0, 'the missing command to be named');
    expect(said()).toEqual([
      expect.stringMatching(
        /^error .*the Redis server \(7\.\d+\.\d+\) lacks HRANDFIELD, which the fair queues' scripts use \(Redis 6\.2 or later; Debian 11's and Ubuntu 22\.04's redis-server package is 6\.0/,
      ),
    ]);
  });

  it('says nothing on a Redis that has them', async () => {
    redis = await startRedis();
    const booted = await boot(redis);
    app = booted.app;
    // The check is one round trip at boot; a tick (every second) has run well after it.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(booted.lines.filter((line) => line.includes('which the fair queues'))).toEqual([]);
  });
});
