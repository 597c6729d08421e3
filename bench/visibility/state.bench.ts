/**
 * bench/visibility/state: what the visibility figures cost Redis, on one private redis-server.
 * - write: Redis commands and Redis µs per job for the counters one process flushes (20k jobs
 *   over 100 tenants, enqueued + started + completed, flushed every 2,000 jobs);
 * - read: Redis µs of one on-demand count (visibility-count.lua) of a queue holding N waiting
 *   jobs (module-shaped data with a `_tenant` envelope), as the inspector runs it per call.
 *
 *   npx ts-node --transpile-only bench/visibility/state.bench.ts
 */
import 'reflect-metadata';
import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { startRedis } from '../../test/support/redis-server';
import { QueueVisibility } from '../../lib/metrics/visibility-batch';
import { VisibilityKeys } from '../../lib/metrics/visibility-keys';
import { countBullJobs } from '../../lib/metrics/visibility-count.script';
import { CountingSeries } from '../../lib/metrics/metric-series';

const JOBS = 20_000;
const TENANTS = 100;

async function commandStats(redis: IORedis): Promise<{ calls: number; usec: number }> {
  const info = await redis.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const line of info.split('\n')) {
    const m = /^cmdstat_(\w+):calls=(\d+),usec=(\d+)/.exec(line);
    if (m && m[1] !== 'info') {
      calls += Number(m[2]);
      usec += Number(m[3]);
    }
  }
  return { calls, usec };
}

async function main() {
  const server = await startRedis();
  const redis = new IORedis({ host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null });
  try {
    const definition = { name: 'bench', bullPrefix: '{tq:bench}' } as never;
    const keys = new VisibilityKeys(definition);
    const queue = new QueueVisibility(keys, (t) => new CountingSeries('bench', t));
    await redis.config('RESETSTAT');
    const before = await commandStats(redis);
    for (let i = 0; i < JOBS; i++) {
      const now = Date.now();
      const record = queue.record(`tenant-${i % TENANTS}`);
      record.enqueue(now, false);
      record.firstStart(now, 3);
      record.result(now, 0);
      if (i % 2000 === 1999) await queue.flush(redis, now, 420);
    }
    const after = await commandStats(redis);
    const write = {
      commandsPerJob: +((after.calls - before.calls) / JOBS).toFixed(3),
      redisUsPerJob: +((after.usec - before.usec) / JOBS).toFixed(3),
    };

    const reads: { waiting: number; redisMsPerCount: number; complete: boolean }[] = [];
    for (const waiting of [1_000, 5_000]) {
      const prefix = `{tq:read${waiting}}`;
      const bull = new Queue('read', { connection: redis, prefix });
      const jobs = Array.from({ length: waiting }, (_, n) => ({
        name: 'n',
        data: {
          n,
          _tenant: {
            v: 1,
            tenantId: `tenant-${n % TENANTS}`,
            actorType: 'system',
            enqueuedAt: new Date().toISOString(),
            correlationId: 'c',
          },
        },
      }));
      for (let i = 0; i < jobs.length; i += 1000) await bull.addBulk(jobs.slice(i, i + 1000));
      const readKeys = new VisibilityKeys({ name: 'read', bullPrefix: prefix } as never);
      await countBullJobs(redis, readKeys);
      await redis.config('RESETSTAT');
      let complete = false;
      for (let round = 0; round < 5; round++)
        complete = (await countBullJobs(redis, readKeys)).complete;
      const stats = await commandStats(redis);
      reads.push({ waiting, redisMsPerCount: +(stats.usec / 5 / 1000).toFixed(2), complete });
      await bull.close();
    }
    console.log(JSON.stringify({ jobs: JOBS, tenants: TENANTS, write, reads }));
  } finally {
    await redis.quit();
    await server.stop();
  }
}
void main();
