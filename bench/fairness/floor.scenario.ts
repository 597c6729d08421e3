/**
 * Floor scenario: the same flood through a fair queue without floors and with one tenant at
 * `minConcurrency`, in alternating rounds on one Redis.
 *   npx ts-node --transpile-only bench/fairness/floor.scenario.ts [--rounds=2] [--jobMs=10] ...
 * Three tenants of weight `floodWeight` flood (their jobs enqueued first), tenant F (weight 1)
 * enqueues after them; every job waits `jobMs` on a timer. Prints one JSON row: throughputRatio (jobs/s with the floor over jobs/s
 * without, summed over the rounds) and floorHeld (share of F's running-count samples at or above
 * its floor while it had work, with the floor; `floorHeldWithout` is the same count without).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import {
  TenantContext,
  TenantFairness,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../lib';
import { startRedis } from '../../test/support/redis-server';
import { load1, runScript } from '../bench-utils';
import { until } from './fairness-harness';

export interface FloorScenarioOptions {
  rounds?: number;
  /** Jobs of each flooding tenant. */
  flood?: number;
  /** Jobs of tenant F. */
  light?: number;
  concurrency?: number;
  floor?: number;
  jobMs?: number;
  /** Weight of each flooding tenant (F has 1): F's share of the slots without a floor. */
  floodWeight?: number;
}

interface Run {
  jobsPerSecond: number;
  samples: number[];
}

async function runOnce(connection: object, floor: number, o: Required<FloorScenarioOptions>) {
  const running = { F: 0, startsF: 0, done: 0 };

  @TenantProcessor('floor', {
    concurrency: o.concurrency,
    autorun: false,
    removeOnComplete: { count: 0 },
  })
  class FloorProcessor extends TenantWorkerHost {
    async process(job: TenantJob<{ ms: number }>) {
      const f = job.tenant!.tenantId === 'F';
      if (f) {
        running.F++;
        running.startsF++;
      }
      await new Promise((resolve) => setTimeout(resolve, job.data.ms));
      if (f) running.F--;
      running.done++;
    }
  }

  @Module({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({
        connection,
        prefix: `f${Math.random().toString(36).slice(2, 8)}`,
      }),
      TenantQueueModule.registerQueue({ name: 'floor', fairness: {} }),
    ],
    providers: [FloorProcessor],
  })
  class FloorBenchModule {}

  const app = await NestFactory.createApplicationContext(FloorBenchModule, {
    logger: ['error', 'warn'],
  });
  try {
    const queue = app.get(TenantQueueRegistry).getQueue<{ ms: number }>('floor');
    const context = app.get(TenantContext);
    const fairness = app.get(TenantFairness);
    for (const tenant of ['A', 'B', 'C']) await fairness.setWeight('floor', tenant, o.floodWeight);
    if (floor > 0) await fairness.setMinConcurrency('floor', 'F', floor);
    for (const [tenant, count] of [
      ['A', o.flood],
      ['B', o.flood],
      ['C', o.flood],
      ['F', o.light],
    ] as const) {
      for (let i = 0; i < count; i += 2000) {
        const size = Math.min(2000, count - i);
        const jobs = Array.from({ length: size }, () => ({ name: 'w', data: { ms: o.jobMs } }));
        await context.run(tenant, () => queue.addBulk(jobs));
      }
    }
    const total = 3 * o.flood + o.light;
    const samples: number[] = [];
    const timer = setInterval(() => {
      if (running.startsF >= floor && running.startsF > 0 && running.startsF < o.light) {
        samples.push(running.F);
      }
    }, 10);
    const start = performance.now();
    void app.get(TenantQueueRegistry).getWorker('floor')!.run();
    try {
      await until(() => running.done >= total, 300_000);
    } finally {
      clearInterval(timer);
    }
    const seconds = (performance.now() - start) / 1000;
    return { jobsPerSecond: total / seconds, samples } satisfies Run;
  } finally {
    await app.close();
  }
}

/** Alternating rounds without and with the floor; see the file's header. */
export async function floorScenario(connection: object, options: FloorScenarioOptions = {}) {
  const o: Required<FloorScenarioOptions> = {
    rounds: 2,
    flood: 1500,
    light: 300,
    concurrency: 16,
    floor: 2,
    jobMs: 10,
    floodWeight: 10,
    ...options,
  };
  const without: Run[] = [];
  const withFloor: Run[] = [];
  const loadAtStart = load1();
  for (let round = 0; round < o.rounds; round++) {
    without.push(await runOnce(connection, 0, o));
    withFloor.push(await runOnce(connection, o.floor, o));
  }
  const sum = (runs: Run[]) => runs.reduce((s, r) => s + r.jobsPerSecond, 0);
  const held = (runs: Run[]) => {
    const all = runs.flatMap((r) => r.samples);
    return all.length ? all.filter((n) => n >= o.floor).length / all.length : 1;
  };
  return {
    throughputRatio: Number((sum(withFloor) / sum(without)).toFixed(3)),
    floorHeld: Number(held(withFloor).toFixed(3)),
    floorHeldWithout: Number(held(without).toFixed(3)),
    jobsPerSecondWithout: without.map((r) => Math.round(r.jobsPerSecond)),
    jobsPerSecondWithFloor: withFloor.map((r) => Math.round(r.jobsPerSecond)),
    samples: withFloor.reduce((n, r) => n + r.samples.length, 0),
    options: o,
    loadAtStart,
    loadAtEnd: load1(),
  };
}

if (require.main === module) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const options: FloorScenarioOptions = {};
  for (const key of ['rounds', 'flood', 'light', 'concurrency', 'floor', 'jobMs'] as const) {
    if (arg(key) !== undefined) options[key] = Number(arg(key));
  }
  runScript(async () => {
    const redis = await startRedis();
    try {
      const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
      return await floorScenario(connection, options);
    } finally {
      await redis.stop();
    }
  });
}
