/**
 * bench/soak: JOBS no-op jobs (default 1,000,000) across TENANTS tenants (default 1,000) through
 * this module with fairness on, in steps of STEP jobs (default 100,000), each step enqueued and
 * drained. Heap after a forced GC at every step; Redis `used_memory` and `DBSIZE` after a warm-up
 * step and again once everything has drained. Writes bench/results/soak.json. Not part of CI:
 *
 *   npm run bench:soak            (JOBS=300000 npm run bench:soak for a shorter run)
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import IORedis from 'ioredis';
import { ClsModule } from 'nestjs-cls';
import {
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../lib';
import { startRedis } from '../../test/support/redis-server';
import { machine, table, updateBenchmarksPage, writeResult } from '../bench-utils';

const JOBS = Number(process.env.JOBS ?? 1_000_000);
const TENANTS = Number(process.env.TENANTS ?? 1_000);
const STEP = Number(process.env.STEP ?? 100_000);
const WARM_UP = Number(process.env.WARM_UP ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);
const MB = 2 ** 20;

const gc = (globalThis as { gc?: () => void }).gc;
const counter = { done: 0 };

@TenantProcessor('soak', { concurrency: CONCURRENCY, removeOnComplete: { count: 0 } })
class SoakProcessor extends TenantWorkerHost {
  async process(_job: TenantJob) {
    counter.done++;
  }
}

async function heapMb(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc!();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return +(process.memoryUsage().heapUsed / MB).toFixed(1);
}

async function redisMemory(redis: IORedis) {
  const info = await redis.info('memory');
  const used = Number(/used_memory:(\d+)/.exec(info)![1]);
  return { usedMemoryMb: +(used / MB).toFixed(2), dbsize: await redis.dbsize() };
}

/** Key shapes left in Redis (tenant ids and job ids folded), for the leak report. */
async function keyShapes(redis: IORedis): Promise<Record<string, number>> {
  const shapes: Record<string, number> = {};
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const shape = key.replace(/t\d{4}/g, '<tenant>').replace(/:[0-9a-f-]{16,}/g, ':<id>');
      shapes[shape] = (shapes[shape] ?? 0) + 1;
    }
  } while (cursor !== '0');
  return shapes;
}

async function main() {
  if (!gc) throw new Error('run with node --expose-gc (npm run bench:soak does)');
  const server = await startRedis();
  const connection = { host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null };
  const redis = new IORedis(connection);
  @Module({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({ connection, prefix: 'soak' }),
      TenantQueueModule.registerQueue({ name: 'soak', fairness: {} }),
    ],
    providers: [SoakProcessor],
  })
  class SoakModule {}
  const app = await NestFactory.createApplicationContext(SoakModule, { logger: ['error'] });
  const queue = app.get(TenantQueueRegistry).getQueue('soak');
  const context = app.get(TenantContext);
  const tenants = Array.from({ length: TENANTS }, (_, i) => `t${String(i).padStart(4, '0')}`);

  let enqueued = 0;
  const run = async (count: number) => {
    const perTenant = Math.ceil(count / TENANTS);
    let left = count;
    for (const tenantId of tenants) {
      const size = Math.min(perTenant, left);
      if (size <= 0) break;
      const jobs = Array.from({ length: size }, () => ({ name: 'noop', data: {} }));
      await context.run(tenantId, () => queue.addBulk(jobs));
      left -= size;
      enqueued += size;
    }
    const deadline = Date.now() + 30 * 60_000;
    while (counter.done < enqueued) {
      if (Date.now() > deadline) throw new Error(`stuck at ${counter.done}/${enqueued}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  /** Lets each process's upkeep tick run once more, then reads Redis. */
  const settled = async () => {
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    return redisMemory(redis);
  };

  const started = Date.now();
  const samples: { jobs: number; heapMb: number; rssMb: number; seconds: number }[] = [];
  let result: Record<string, unknown>;
  try {
    const empty = await redisMemory(redis);
    await run(WARM_UP);
    const baseline = { ...(await settled()), heapMb: await heapMb() };
    console.log('baseline after warm-up', JSON.stringify(baseline));
    counter.done = 0;
    enqueued = 0;
    const loopStart = Date.now();
    for (let jobs = STEP; jobs <= JOBS; jobs += STEP) {
      await run(STEP);
      const sample = {
        jobs,
        heapMb: await heapMb(),
        rssMb: +(process.memoryUsage().rss / MB).toFixed(1),
        seconds: Math.round((Date.now() - loopStart) / 1000),
      };
      samples.push(sample);
      console.log(JSON.stringify(sample));
    }
    const seconds = (Date.now() - loopStart) / 1000;
    const after = await settled();
    const counts = await queue.bullQueue.getJobCounts();
    const leftover = await keyShapes(redis);
    result = {
      command: `JOBS=${JOBS} TENANTS=${TENANTS} npm run bench:soak`,
      settings: {
        jobs: JOBS,
        tenants: TENANTS,
        step: STEP,
        warmUp: WARM_UP,
        concurrency: CONCURRENCY,
      },
      jobsPerSecond: Math.round(JOBS / seconds),
      completed: counter.done,
      beforeAnyJob: empty,
      baseline,
      afterDrain: { ...after, bullJobCounts: counts },
      heap: {
        at100kMb: samples.find((s) => s.jobs === STEP)?.heapMb,
        atEndMb: samples.at(-1)?.heapMb,
        maxMb: Math.max(...samples.map((s) => s.heapMb)),
        growthAfterFirstStepMb: +(samples.at(-1)!.heapMb - samples[0].heapMb).toFixed(1),
      },
      redis: {
        usedMemoryDeltaMb: +(after.usedMemoryMb - baseline.usedMemoryMb).toFixed(2),
        dbsizeDelta: after.dbsize - baseline.dbsize,
        dbsizeVsBeforeAnyJob: after.dbsize - empty.dbsize,
        keysAfterDrain: leftover,
      },
      samples,
      totalSeconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await app.close();
    await redis.quit();
    await server.stop();
  }
  const file = writeResult('soak', result);
  console.log(JSON.stringify({ ...result, samples: undefined }, null, 2));
  console.log(`written to ${file}`);
  const heap = result.heap as Record<string, number>;
  const base = result.baseline as Record<string, number>;
  const after = result.afterDrain as Record<string, number>;
  const m = machine();
  updateBenchmarksPage(
    'soak',
    [
      table(
        [
          '',
          'after warm-up',
          `after ${(STEP / 1000).toFixed(0)}k`,
          `after ${(JOBS / 1e6).toString()}M`,
        ],
        [
          ['heap (MB, after GC)', base.heapMb, heap.at100kMb, heap.atEndMb],
          ['Redis used_memory (MB)', base.usedMemoryMb, '', after.usedMemoryMb],
          ['Redis DBSIZE (keys)', base.dbsize, '', after.dbsize],
        ],
      ),
      '',
      `${JOBS.toLocaleString('en')} no-op jobs across ${TENANTS.toLocaleString('en')} tenants, fairness on, ` +
        `${result.jobsPerSecond} jobs/s end to end (producer and worker in one process, concurrency ` +
        `${CONCURRENCY}); ${m.cpus} x ${m.cpuModel}, Node ${m.node}. \`npm run bench:soak\`, ` +
        `\`bench/results/soak.json\`.`,
    ].join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
