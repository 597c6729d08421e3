/**
 * bench/noisy-neighbour: tenant A floods the queue while tenant B adds one job every 100 ms;
 * every B job's wait (enqueue -> start) and a sample of A's, over time, through plain BullMQ and
 * through this module with fairness on, one private Redis, one run. Writes
 * bench/results/noisy-neighbour.json and bench/results/noisy-neighbour.svg.
 *
 *   npm run bench:noisy            (FLOOD=20000 CONCURRENCY=10 JOB_MS=1 by default)
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Job, Queue, Worker } from 'bullmq';
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
import Redis from 'ioredis';
import {
  load1,
  machine,
  percentile,
  redisPerJob,
  redisWork,
  table,
  updateBenchmarksPage,
  writeResult,
} from '../bench-utils';
import { Series, renderChart } from '../svg-chart';

const FLOOD = Number(process.env.FLOOD ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 10);
const JOB_MS = Number(process.env.JOB_MS ?? 1);
const B_EVERY_MS = 100;
const A_SAMPLE_EVERY = 50;
const CHUNK = 1_000;

interface NoisyJob {
  tenant: 'A' | 'B';
  t0: number;
}

interface Sample {
  tenant: 'A' | 'B';
  /** When the job started, seconds after the flood began. */
  at: number;
  waitMs: number;
}

interface Side {
  label: string;
  add(tenant: 'A' | 'B', count: number): Promise<void>;
  close(): Promise<void>;
}

/** What every job does: note its wait (all of B, every 50th of A), then burn JOB_MS of CPU. */
const probe = {
  start: 0,
  aStarted: 0,
  bStarted: 0,
  samples: [] as Sample[],
  handle(data: NoisyJob) {
    const now = Date.now();
    const n = data.tenant === 'A' ? ++this.aStarted : ++this.bStarted;
    if (data.tenant === 'B' || n % A_SAMPLE_EVERY === 0) {
      this.samples.push({
        tenant: data.tenant,
        at: (now - this.start) / 1000,
        waitMs: now - data.t0,
      });
    }
    const end = performance.now() + JOB_MS;
    while (performance.now() < end);
  },
};

const jobsOf = (tenant: 'A' | 'B', count: number) =>
  Array.from({ length: count }, () => ({ name: 'w', data: { tenant, t0: Date.now() } }));

async function plainSide(connection: object): Promise<Side> {
  const name = `noisy${Math.random().toString(36).slice(2, 8)}`;
  const queue = new Queue(name, { connection });
  const worker = new Worker(name, async (job: Job<NoisyJob>) => probe.handle(job.data), {
    connection,
    concurrency: CONCURRENCY,
    removeOnComplete: { count: 0 },
  });
  await worker.waitUntilReady();
  return {
    label: 'plain BullMQ',
    add: async (tenant, count) => void (await queue.addBulk(jobsOf(tenant, count))),
    close: async () => {
      await worker.close();
      await queue.close();
    },
  };
}

async function moduleSide(connection: object): Promise<Side> {
  @TenantProcessor('noisy', { concurrency: CONCURRENCY, removeOnComplete: { count: 0 } })
  class NoisyProcessor extends TenantWorkerHost {
    async process(job: TenantJob<NoisyJob>) {
      probe.handle(job.data);
    }
  }
  @Module({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({
        connection,
        prefix: `nn${Math.random().toString(36).slice(2, 8)}`,
      }),
      TenantQueueModule.registerQueue({ name: 'noisy', fairness: {} }),
    ],
    providers: [NoisyProcessor],
  })
  class NoisyModule {}
  const app = await NestFactory.createApplicationContext(NoisyModule, { logger: ['error'] });
  const queue = app.get(TenantQueueRegistry).getQueue<NoisyJob>('noisy');
  const context = app.get(TenantContext);
  return {
    label: 'this module (fairness on)',
    add: (tenant, count) =>
      context.run(tenant, async () => void (await queue.addBulk(jobsOf(tenant, count)))),
    close: () => app.close(),
  };
}

async function until(predicate: () => boolean, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('noisy-neighbour bench timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A's flood in chunks, B's trickle until the flood is done; returns every sample. */
async function noisyRun(side: Side, stats: Redis) {
  const loadAtStart = load1();
  const before = await redisWork(stats);
  const cpu = process.cpuUsage();
  Object.assign(probe, { start: Date.now(), aStarted: 0, bStarted: 0, samples: [] });
  let bAdded = 0;
  const trickle = setInterval(() => {
    bAdded++;
    void side.add('B', 1);
  }, B_EVERY_MS);
  for (let sent = 0; sent < FLOOD; sent += CHUNK)
    await side.add('A', Math.min(CHUNK, FLOOD - sent));
  await until(() => probe.aStarted === FLOOD);
  const floodSeconds = (Date.now() - probe.start) / 1000;
  clearInterval(trickle);
  await until(() => probe.bStarted === bAdded);
  const used = process.cpuUsage(cpu);
  const redis = redisPerJob(before, await redisWork(stats), FLOOD + bAdded);
  await side.close();
  const waits = (tenant: 'A' | 'B') =>
    probe.samples.filter((s) => s.tenant === tenant).map((s) => s.waitMs);
  const b = waits('B');
  return {
    label: side.label,
    floodSeconds: +floodSeconds.toFixed(2),
    aJobsPerSecond: Math.round(FLOOD / floodSeconds),
    bJobs: b.length,
    bWaitMs: { p50: percentile(b, 50), p99: percentile(b, 99), max: Math.max(...b) },
    aWaitMs: { p50: percentile(waits('A'), 50), max: Math.max(...waits('A')) },
    nodeCpuMicrosPerJob: Math.round((used.user + used.system) / (FLOOD + bAdded)),
    ...redis,
    loadAtStart,
    loadAtEnd: load1(),
    samples: probe.samples,
  };
}

async function main() {
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  let plain: Awaited<ReturnType<typeof noisyRun>>;
  let fair: Awaited<ReturnType<typeof noisyRun>>;
  const stats = new Redis(connection);
  try {
    plain = await noisyRun(await plainSide(connection), stats);
    console.log(JSON.stringify({ ...plain, samples: undefined }));
    fair = await noisyRun(await moduleSide(connection), stats);
    console.log(JSON.stringify({ ...fair, samples: undefined }));
  } finally {
    stats.disconnect();
    await redis.stop();
  }
  const ratios = {
    bWaitP99VsPlain: +(fair.bWaitMs.p99 / plain.bWaitMs.p99).toFixed(4),
    bWaitP50VsPlain: +(fair.bWaitMs.p50 / plain.bWaitMs.p50).toFixed(4),
    aThroughputVsPlain: +(fair.aJobsPerSecond / plain.aJobsPerSecond).toFixed(2),
  };
  const settings = { flood: FLOOD, concurrency: CONCURRENCY, jobMs: JOB_MS, bEveryMs: B_EVERY_MS };
  const file = writeResult('noisy-neighbour', { settings, ratios, plain, module: fair });
  console.log(`written to ${file}`);

  const points = (run: typeof plain, tenant: 'A' | 'B') =>
    run.samples.filter((s) => s.tenant === tenant).map((s): [number, number] => [s.at, s.waitMs]);
  const series: Series[] = [
    { name: 'A (flood), BullMQ', color: '#f4a582', points: points(plain, 'A') },
    { name: 'A (flood), module', color: '#92c5de', points: points(fair, 'A') },
    { name: 'B, plain BullMQ', color: '#b2182b', points: points(plain, 'B') },
    { name: 'B, this module', color: '#2166ac', points: points(fair, 'B') },
  ];
  const svg = renderChart(series, {
    title: `Noisy neighbour: A adds ${FLOOD.toLocaleString('en')} jobs, B one every ${B_EVERY_MS} ms`,
    xLabel: 'job start (s after the flood began)',
    yLabel: 'wait, enqueue to start (ms, log)',
    logY: true,
  });
  writeFileSync(join(__dirname, '..', 'results', 'noisy-neighbour.svg'), `${svg}\n`);

  const m = machine();
  updateBenchmarksPage(
    'noisy-neighbour',
    [
      '![Per-job wait of tenants A and B over time, plain BullMQ vs this module](../bench/results/noisy-neighbour.svg)',
      '',
      table(
        [
          '',
          'B wait p50',
          'B wait p99',
          'B wait max',
          "A's flood done in",
          'A jobs/s',
          'Node CPU µs/job',
          'Redis CPU µs/job',
          'Redis commands/job',
          'load start-end',
        ],
        [plain, fair].map((run) => [
          run.label,
          `${run.bWaitMs.p50} ms`,
          `${run.bWaitMs.p99} ms`,
          `${run.bWaitMs.max} ms`,
          `${run.floodSeconds} s`,
          run.aJobsPerSecond,
          run.nodeCpuMicrosPerJob,
          run.redisMicrosPerJob.toFixed(1),
          run.commandsPerJob.toFixed(2),
          `${run.loadAtStart}-${run.loadAtEnd}${Math.max(run.loadAtStart, run.loadAtEnd) > 1.5 ? ' (loaded)' : ''}`,
        ]),
      ),
      '',
      `B's p99 wait is ${ratios.bWaitP99VsPlain}x plain BullMQ's; A's throughput ${ratios.aThroughputVsPlain}x ` +
        `(same run, ${FLOOD.toLocaleString('en')} A jobs of ${JOB_MS} ms CPU, concurrency ${CONCURRENCY}; ` +
        `${m.cpus} x ${m.cpuModel}, Node ${m.node}, ${m.redis.split(' ').slice(0, 3).join(' ')}; ` +
        `load ${m.loadAverage.map((l) => l.toFixed(1)).join(' ')}). \`npm run bench:noisy\`, ` +
        `\`bench/results/noisy-neighbour.json\`.`,
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
