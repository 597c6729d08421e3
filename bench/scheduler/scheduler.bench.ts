/**
 * Scheduler bench: tick cost with 100,000 schedules stored and 0 / 100 / 1,000 due, and the
 * fan-out of one @TenantCron over 10,000 tenants. Starts its own redis-server on a free port.
 *
 *   npx ts-node --transpile-only bench/scheduler/scheduler.bench.ts
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Queue } from 'bullmq';
import { ClsModule } from 'nestjs-cls';
import {
  InMemoryTenantDirectory,
  SchedulerClock,
  TenantCron,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantScheduler,
} from '../../lib';
import { startRedis } from '../../test/support/redis-server';
import { machine, median, percentile, writeResult } from '../bench-utils';

const SCHEDULES = 100_000;
const TENANTS = 10_000;
const SAMPLES = 7;
const DAY = 86_400_000;
const START = Date.parse('2026-06-01T00:00:00Z');

const clock = { value: START, now: async () => clock.value };

@Injectable()
class Digest {
  runs = 0;

  @TenantCron('0 9 * * *', { name: 'digest', jobOptions: { removeOnComplete: { count: 20_000 } } })
  async digest(): Promise<void> {
    this.runs++;
  }
}

async function main(): Promise<void> {
  const redis = await startRedis();
  const url = new URL(redis.url);
  const directory = new InMemoryTenantDirectory(
    Array.from({ length: TENANTS }, (_, i) => ({ id: `t${String(i).padStart(5, '0')}` })),
    500,
  );
  @Module({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({
        connection: { host: url.hostname, port: Number(url.port) },
        scheduler: { enabled: false, batchSize: 1_000 },
        directory: { useValue: directory },
      }),
      TenantQueueModule.registerQueue({ name: 'reports' }),
    ],
    providers: [Digest],
  })
  class BenchModule {}

  const app = await Test.createTestingModule({ imports: [BenchModule] })
    .overrideProvider(SchedulerClock)
    .useValue(clock)
    .compile();
  app.useLogger(['error']);
  await app.init();
  try {
    const scheduler = app.get(TenantScheduler);
    const reports = app.get(TenantQueueRegistry).getQueue('reports').bullQueue;

    // 100 schedules due at 12:00 UTC every day, 1,000 at 13:00, the rest spread over
    // July-December (never due during the bench).
    const cronOf = (i: number) =>
      i < 100
        ? '0 12 * * *'
        : i < 1_100
          ? '0 13 * * *'
          : `${i % 60} ${i % 24} ${1 + (i % 28)} ${7 + (i % 6)} *`;
    const storeStart = Date.now();
    for (let base = 0; base < SCHEDULES; base += 1_000) {
      await Promise.all(
        Array.from({ length: 1_000 }, (_, k) => base + k).map((i) =>
          scheduler.upsert(`t${String(i % TENANTS).padStart(5, '0')}`, `s${i}`, {
            cron: cronOf(i),
            job: { queue: 'reports', name: 'report', opts: { removeOnComplete: true } },
          }),
        ),
      );
    }
    const storeSeconds = (Date.now() - storeStart) / 1000;

    const tickAt = async (at: number) => {
      clock.value = at;
      const started = process.hrtime.bigint();
      const result = await scheduler.tick();
      return { ms: Number(process.hrtime.bigint() - started) / 1e6, result };
    };
    const idle: number[] = [];
    for (let i = 0; i < 50; i++) idle.push((await tickAt(START + 30_000 + i * 1_000)).ms);
    const tick0 = summary(idle, 0);

    // Each day: 100 schedules due at 12:00, 1,000 at 13:00 (each tick enqueues their jobs).
    const at12: number[] = [];
    const at13: number[] = [];
    for (let day = 0; day < SAMPLES; day++) {
      for (const [hour, due, times] of [
        [12, 100, at12],
        [13, 1_000, at13],
      ] as const) {
        const { ms, result } = await tickAt(START + day * DAY + hour * 3_600_000 + 200);
        if (result.enqueued !== due) throw new Error(`${due} due: enqueued ${result.enqueued}`);
        times.push(ms);
      }
      await reports.drain(true);
    }
    const tick100 = summary(at12, 100);
    const tick1000 = summary(at13, 1_000);

    // Fan-out: one occurrence of @TenantCron('0 9 * * *') over 10,000 active tenants.
    const digest = app.get(Digest);
    const cronQueue: Queue = app.get(TenantQueueRegistry).getQueue('tq-cron').bullQueue;
    const fanOutQueue: Queue = app.get(TenantQueueRegistry).getQueue('tq-cron-fanout').bullQueue;
    const occurrence = START + SAMPLES * DAY + 9 * 3_600_000;
    clock.value = occurrence + 100;
    const fanStart = Date.now();
    await scheduler.tick();
    let fanOutDoneMs = 0;
    for (;;) {
      const [job] = await fanOutQueue.getJobs(['completed', 'failed'], 0, 0);
      if (job?.finishedOn) {
        fanOutDoneMs = job.finishedOn - fanStart;
        if (job.failedReason) throw new Error(`fan-out failed: ${job.failedReason}`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const counts = await cronQueue.getJobCounts(
      'waiting',
      'active',
      'completed',
      'failed',
      'prioritized',
    );
    const enqueuedJobs = Object.values(counts).reduce((a, b) => a + b, 0);
    while (digest.runs < TENANTS) await new Promise((resolve) => setTimeout(resolve, 20));
    const allRunMs = Date.now() - fanStart;

    const result = {
      schedulesStored: SCHEDULES,
      storeSeconds: round(storeSeconds),
      tick: { due0: tick0, due100: tick100, due1000: tick1000 },
      fanOut: { tenants: TENANTS, enqueuedJobs, allEnqueuedMs: fanOutDoneMs, allRunMs },
      goals: {
        tickWith0DueUnder5ms: tick0.medianMs < 5,
        perDueEntryUnder0_5ms:
          (tick1000.perDueEntryMs ?? 1) < 0.5 && (tick100.perDueEntryMs ?? 1) < 0.5,
        fanOut10kUnder5s: fanOutDoneMs < 5_000 && enqueuedJobs === TENANTS,
      },
      machine: machine(),
    };
    const file = writeResult('scheduler', result);
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${file}`);
  } finally {
    await app.close();
    await redis.stop();
  }
}

const round = (value: number) => Math.round(value * 1000) / 1000;

function summary(times: number[], due: number) {
  return {
    due,
    samples: times.length,
    medianMs: round(median(times)),
    p95Ms: round(percentile(times, 95)),
    perDueEntryMs: due > 0 ? round(median(times) / due) : undefined,
  };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
