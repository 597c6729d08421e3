import { Logger } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import IORedis from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TenantQueueRegistry, TenantScheduler, tenantScheduleJobId } from '../../../lib';
import { ScheduleClaim, ScheduleStore } from '../../../lib/scheduler/schedule.store';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { StartedRedis, hasRedisServer, startRedis } from '../../support/redis-server';
import { uniquePrefix } from '../../support/redis-url';
import { isClusterRun } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

jest.setTimeout(120_000);

const run = hasRedisServer() && !isClusterRun() ? describe : describe.skip;

const SCHEDULES = 500;
const CLAIM_TIMEOUT = 2_000;
const at = Date.parse;

/**
 * A real redis-server (AOF, fsync at every write, as a Redis that keeps its data across a restart
 * is run) restarted in the middle of a tick over 500 due schedules: after the ticks that follow,
 * every occurrence is enqueued, once.
 */
run('the scheduler across a Redis restart in the middle of a tick (own redis-server)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tq-sched-aof-'));
  const args = ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir];
  let server: StartedRedis;
  let app: TestingModule;
  let redis: IORedis;
  const clock = new ManualClock(at('2026-09-01T08:00:00Z'));

  beforeAll(async () => {
    server = await startRedis(args);
    // The failed tick and deliveries are logged as documented; not what this test checks.
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    app = await bootSchedulerApp({
      prefix: uniquePrefix(),
      clock,
      queues: ['reports'],
      connection: { host: '127.0.0.1', port: server.port },
      scheduler: { enabled: false, batchSize: 100, claimTimeout: CLAIM_TIMEOUT },
    });
    redis = new IORedis({ host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null });
  });

  afterAll(async () => {
    await app?.close();
    redis?.disconnect();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    jest.restoreAllMocks();
  });

  it.each([
    ['after the third claim of the tick lands, while it delivers', 'after', '2026-09-01'],
    ['while the third claim of the tick is sent', 'before', '2026-09-02'],
  ])('enqueues each of 500 occurrences once when Redis restarts %s', async (_, when, day) => {
    const scheduler = app.get(TenantScheduler);
    const store = app.get(ScheduleStore);
    const occurrence = at(`${day}T09:00:00Z`);
    const expected = new Set<string>();
    for (let i = 0; i < SCHEDULES; i++) {
      const tenantId = `tenant-${String(i).padStart(3, '0')}`;
      if (when === 'after') {
        await scheduler.upsert(tenantId, 'sync', {
          cron: '0 9 * * *',
          job: { queue: 'reports', name: 'sync' },
        });
      }
      expected.add(tenantScheduleJobId(tenantId, 'sync', occurrence));
    }

    // Five batches of 100: Redis restarts at the third, and the tick goes on with the others.
    const claim = store.claim.bind(store);
    let claims = 0;
    let restarted: Promise<void> | undefined;
    const restart = async () => {
      await server.stop();
      server = await startRedis(args, server.port);
    };
    store.claim = async (lease: number, batch: ScheduleClaim[]) => {
      if (++claims !== 3) return claim(lease, batch);
      if (when === 'before') {
        restarted = restart();
        return claim(lease, batch);
      }
      const won = await claim(lease, batch);
      restarted = restart();
      return won;
    };
    clock.set(occurrence + 100);
    await scheduler.tick().catch(() => undefined);
    store.claim = claim;
    await restarted;

    const pending = async () =>
      (await redis.zcount(store.keys.due, '-inf', occurrence)) +
      (await redis.zcard(store.keys.outbox));
    // Ticks go on (the scheduler's clock moves on with them) until nothing is due or claimed.
    await waitFor(
      async () => {
        clock.set(clock.value + 500);
        await scheduler.tick().catch(() => undefined);
        return (await pending()) === 0;
      },
      'every occurrence claimed and enqueued after the restart',
      60_000,
    );

    const bull = app.get(TenantQueueRegistry).getQueue('reports').bullQueue;
    const jobs = await redis.lrange(`${bull.opts.prefix}:reports:wait`, 0, -1);
    const ofDay = jobs.filter((id) => id.endsWith(`${day.replace(/-/g, '')}T090000Z`));
    expect(ofDay).toHaveLength(SCHEDULES);
    expect(new Set(ofDay)).toEqual(expected);
    // Every schedule moved on to its next run, once.
    expect(await redis.zcount(store.keys.due, occurrence + 1, occurrence + 86_400_000)).toBe(
      SCHEDULES,
    );
  });
});
