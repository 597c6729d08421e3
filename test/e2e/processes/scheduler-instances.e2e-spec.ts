import { ChildProcess } from 'node:child_process';
import { TestingModule } from '@nestjs/testing';
import { TenantQueueRegistry, TenantScheduler, tenantScheduleJobId } from '../../../lib';
import { tenantScheduleId } from '../../../lib/scheduler/stored-schedule';
import { ZonedCron } from '../../../lib/scheduler/zoned-cron';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { forkFixture, killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const MINUTE = 60_000;
const DAY_START = Date.parse('2026-11-01T00:00:00Z'); // New York falls back at 06:00 UTC
const DAY_END = DAY_START + 1_440 * MINUTE;
const STEP = 10 * MINUTE;
const TENANTS = 200;
const ZONES = ['UTC', 'America/New_York', 'Europe/Kyiv', 'Australia/Lord_Howe'];
// 'H */3 * * *': each tenant's own minute (its schedule's seed), the same in every process.
const CRONS = [
  '*/20 * * * *',
  '*/30 * * * *',
  '5,35 * * * *',
  '0 * * * *',
  '50 */2 * * *',
  'H */3 * * *',
];

describe('three scheduler instances in separate processes over a simulated day', () => {
  const prefix = uniquePrefix('inst');
  const keys = {
    clock: `${prefix}-test:clock`,
    claims: `${prefix}-test:claims`,
    recovered: `${prefix}-test:recovered`,
  };
  const children: ChildProcess[] = [];
  const exits = new Map<number, Promise<NodeJS.Signals | number | null>>();
  let redis: TestRedisClient;
  let app: TestingModule;
  const expected = new Set<string>();
  const hashedTenants = new Set<string>();

  beforeAll(async () => {
    redis = openRedis();
    await redis.set(keys.clock, DAY_START);
    app = await bootSchedulerApp({
      prefix,
      clock: new ManualClock(DAY_START),
      queues: ['reports'],
    });
    const scheduler = app.get(TenantScheduler);
    for (let i = 0; i < TENANTS; i++) {
      const tenantId = `tenant-${String(i).padStart(3, '0')}`;
      const cron = CRONS[i % CRONS.length];
      const timezone = ZONES[Math.floor(i / CRONS.length) % ZONES.length];
      await scheduler.upsert(tenantId, 'sync', {
        cron,
        timezone,
        job: { queue: 'reports', name: 'sync' },
      });
      if (cron.startsWith('H')) hashedTenants.add(tenantId);
      const zoned = ZonedCron.parse(cron, timezone, tenantScheduleId(tenantId, 'sync'));
      for (let t = zoned.nextAfter(DAY_START); t !== null && t <= DAY_END; t = zoned.nextAfter(t)) {
        expected.add(tenantScheduleJobId(tenantId, 'sync', t));
      }
    }
    const env = (instance: number) => ({
      TQ_PREFIX: prefix,
      CLOCK_KEY: keys.clock,
      CLAIMS_KEY: keys.claims,
      RECOVERED_KEY: keys.recovered,
      CLAIM_TIMEOUT: String(15 * MINUTE),
      LATE_AFTER: String(60 * MINUTE),
      INSTANCE: String(instance),
      CRASH_AFTER_CLAIMS: instance === 3 ? '40' : '0',
    });
    const started = await Promise.all(
      [1, 2, 3].map((instance) => forkFixture('scheduler-instance.ts', env(instance), children)),
    );
    // Nothing claims before the test moves the clock, so no instance can have exited yet.
    started.forEach((child, i) =>
      exits.set(
        i + 1,
        new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code))),
      ),
    );
  }, 90_000);

  afterAll(async () => {
    await killAll(children);
    await app?.close();
    await redis?.quit();
  });

  it('enqueues every occurrence exactly once, surviving an instance killed after claiming', async () => {
    const tag = `{${prefix}:sched}`;
    for (let clock = DAY_START + STEP; clock <= DAY_END; clock += STEP) {
      await redis.set(keys.clock, clock);
      await waitFor(
        async () =>
          (await redis.zcount(`${tag}:due`, '-inf', clock)) === 0 &&
          (await redis.zcount(`${tag}:outbox`, '-inf', clock)) === 0,
        `every occurrence up to ${new Date(clock).toISOString()} to be claimed and enqueued`,
        20_000,
      );
    }
    await waitFor(async () => (await redis.zcard(`${tag}:outbox`)) === 0, 'an empty outbox');

    // Instance 3 was killed right after a winning claim, before it enqueued anything.
    expect(await exits.get(3)).toBe('SIGKILL');
    expect(Number(await redis.get(keys.recovered))).toBeGreaterThan(0);

    // Each occurrence was claimed by exactly one instance...
    const claims = await redis.lrange(keys.claims, 0, -1);
    const occurrences = claims.map((c) => c.slice(c.indexOf('|') + 1));
    expect(new Set(occurrences).size).toBe(occurrences.length);
    const perInstance = new Map<string, number>();
    for (const claim of claims) {
      const instance = claim.slice(0, claim.indexOf('|'));
      perInstance.set(instance, (perInstance.get(instance) ?? 0) + 1);
    }
    expect([...perInstance.keys()].sort()).toEqual(['1', '2', '3']);

    // ...and BullMQ holds exactly the expected job ids: none missing, none doubled.
    const bull = app.get(TenantQueueRegistry).getQueue('reports').bullQueue;
    const waiting = await redis.lrange(`${bull.opts.prefix}:reports:wait`, 0, -1);
    expect(waiting.length).toBe(expected.size);
    expect(new Set(waiting)).toEqual(expected);
    expect(occurrences.length).toBe(expected.size);
    // The hashed schedules ran at their own minutes, not all at one.
    const hashed = new Set(
      waiting.filter((id) => hashedTenants.has(id.split('~')[1])).map((id) => id.slice(-5, -3)), // the mm of yyyyMMddTHHmmssZ
    );
    expect(hashed.size).toBeGreaterThan(10);
  }, 90_000);
});
