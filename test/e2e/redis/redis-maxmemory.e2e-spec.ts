import { Logger, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import IORedis from 'ioredis';
import { ClsModule } from 'nestjs-cls';
import {
  EnqueueUnavailableError,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { hasRedisServer, startRedis, StartedRedis } from '../../support/redis-server';
import { isClusterRun } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

jest.setTimeout(120_000);

const run = hasRedisServer() && !isClusterRun() ? describe : describe.skip;

/** A payload big enough that a few hundred jobs fill the little memory left. */
const DATA = { blob: 'x'.repeat(8_000) };

run('Redis at maxmemory with noeviction (own redis-server)', () => {
  let server: StartedRedis;
  let admin: IORedis;
  let app: TestingModule;
  const ran: string[] = [];

  // Started by the worker case only (autorun false): until then nothing takes the jobs.
  @TenantProcessor('work', { concurrency: 4, autorun: false })
  class WorkProcessor extends TenantWorkerHost {
    async process(job: TenantJob) {
      ran.push(job.id!);
    }
  }

  beforeAll(async () => {
    server = await startRedis();
    admin = new IORedis(server.port, '127.0.0.1');
    @Module({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({
          connection: { host: '127.0.0.1', port: server.port },
          prefix: 'full',
        }),
        // No running worker: the jobs stay, and memory only grows.
        TenantQueueModule.registerQueue(
          { name: 'plain' },
          { name: 'fair', fairness: {} },
          { name: 'work' },
        ),
      ],
      providers: [WorkProcessor],
    })
    class FullModule {}
    app = await Test.createTestingModule({ imports: [FullModule] }).compile();
    await app.init();
  });

  afterAll(async () => {
    await admin?.config('SET', 'maxmemory', '0');
    await app?.close();
    await admin?.quit();
    await server?.stop();
  });

  const queue = (name: string): TenantQueue<any> => app.get(TenantQueueRegistry).getQueue(name);
  const stored = async (name: string) =>
    Object.values(await queue(name).bullQueue.getJobCounts()).reduce((a, b) => a + b, 0);

  it.each([
    ['plain', 'add'],
    ['fair', 'add'],
    ['plain', 'addBulk'],
    ['fair', 'addBulk'],
  ])(
    '%s queue: %s() fails with EnqueueUnavailableError saying what to do, and writes nothing',
    async (name, method) => {
      const jobs = method === 'add' ? 1 : 2;
      const tenant = app.get(TenantContext);
      await tenant.run('acme', () => queue(name).add('warm', {}));
      const used = Number((await admin.info('memory')).match(/used_memory:(\d+)/)![1]);
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', String(used + 1_000_000));
      try {
        let accepted = 1;
        let refused: unknown;
        while (!refused && accepted < 2_000) {
          await tenant
            .run('acme', () =>
              method === 'add'
                ? queue(name).add('fill', DATA)
                : queue(name).addBulk([
                    { name: 'fill', data: DATA },
                    { name: 'fill', data: DATA },
                  ]),
            )
            .then(
              () => (accepted += jobs),
              (error: unknown) => (refused = error),
            );
        }
        expect(refused).toBeInstanceOf(EnqueueUnavailableError);
        const error = refused as EnqueueUnavailableError;
        expect(error.message).toContain('out of memory');
        expect(error.message).toContain('maxmemory');
        // Every job accepted is stored; of the refused call, none when it says so.
        const after = await stored(name);
        if (method === 'add') {
          expect(error.written).toBe(false);
          expect(error.message).toContain('NOT written');
          expect(after).toBe(accepted);
        } else {
          // BullMQ's addBulk is not atomic on every client (ioredis 6 stored the first job).
          expect(error.written).toBe('unknown');
          expect(error.message).toContain('retry with the same jobIds');
          expect(after).toBeGreaterThanOrEqual(accepted);
          expect(after).toBeLessThan(accepted + jobs);
        }
        accepted = after;

        // Memory back: the next add is taken.
        await admin.config('SET', 'maxmemory', '0');
        await tenant.run('acme', () => queue(name).add('after', {}));
        expect(await stored(name)).toBe(accepted + 1);
      } finally {
        await admin.config('SET', 'maxmemory', '0');
        await queue(name).bullQueue.obliterate({ force: true });
      }
    },
  );

  it('logs its refused fetches once (at most once a minute), not once each, and works once Redis has room', async () => {
    for (let i = 0; i < 20; i++) await queue('work').addForTenant('acme', 'n', {});
    const errors: string[] = [];
    const spy = jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((message: unknown) => void errors.push(String(message)));
    try {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');
      void app.get(TenantQueueRegistry).getWorker('work')!.run();
      // The worker's fetches are refused, each an 'error' event (thousands in a few seconds).
      const refusals = () => errors.filter((line) => line.includes('worker work: OOM'));
      await waitFor(() => refusals().length > 0, 'a refusal');
      await new Promise((done) => setTimeout(done, 2_000));
      const full = refusals();
      expect(full).toHaveLength(1);
      expect(full[0]).toContain('Redis is out of memory');
      expect(full[0]).toContain('Logged at most once every 60 s');
      expect(ran).toHaveLength(0);
    } finally {
      spy.mockRestore();
      await admin.config('SET', 'maxmemory', '0');
    }
    await waitFor(() => ran.length === 20, 'the jobs once Redis has room', 30_000);
  });
});
