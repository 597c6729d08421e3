import { INestApplication } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import {
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { TenantQueueHealthIndicator } from '../../../lib/health';
import IORedis from 'ioredis';
import { redisConnection, uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

@TenantProcessor('health-q')
class NoopProcessor extends TenantWorkerHost {
  async process() {
    return 'ok';
  }
}

describe('TenantQueueHealthIndicator (@nestjs/terminus)', () => {
  let app: INestApplication;
  const prefix = uniquePrefix('health');

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(prefix, {
          scheduler: { tickInterval: 50 },
          metrics: { sink: false },
        }),
        TerminusModule,
        TenantQueueModule.registerQueue({ name: 'health-q' }),
      ],
      providers: [NoopProcessor, TenantQueueHealthIndicator],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(() => app?.close());

  it('is up with Redis answering, the worker running and the scheduler ticking', async () => {
    const indicator = app.get(TenantQueueHealthIndicator);
    await waitFor(
      async () => (await indicator.check()).tenantQueue.scheduler === 'ticking',
      'a scheduler tick',
    );
    expect(await indicator.check()).toEqual({
      tenantQueue: {
        status: 'up',
        redis: 'up',
        workers: { 'health-q': 'running' },
        scheduler: 'ticking',
      },
    });
  });

  it('says "stalled" while every scheduler tick fails, though Redis answers, and "ticking" after', async () => {
    const indicator = app.get(TenantQueueHealthIndicator);
    const redis = new IORedis(redisConnection());
    // The scheduler's due index as a string: every tick's read of it fails (WRONGTYPE), as ticks
    // fail on a cluster whose slot moved while PING still answers.
    const due = `{${prefix}:sched}:due`;
    try {
      await redis.del(due);
      await redis.set(due, 'not a sorted set');
      await waitFor(
        async () => (await indicator.check()).tenantQueue.scheduler === 'stalled',
        'the failing ticks to show',
      );
      expect((await indicator.check()).tenantQueue).toMatchObject({ status: 'down', redis: 'up' });
      await redis.del(due);
      await waitFor(
        async () => (await indicator.check()).tenantQueue.scheduler === 'ticking',
        'a tick that succeeds',
      );
    } finally {
      await redis.del(due);
      redis.disconnect();
    }
  });

  it('is down when a worker has stopped', async () => {
    await app.get(TenantQueueRegistry).getWorker('health-q')!.close();
    const result = await app.get(TenantQueueHealthIndicator).check('queues');
    expect(result.queues).toMatchObject({ status: 'down', workers: { 'health-q': 'stopped' } });
  });
});
