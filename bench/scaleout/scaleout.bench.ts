/**
 * bench/scaleout: 4 worker processes and 2 producer processes on one Redis, plain BullMQ vs this
 * module with fairness on, one run. Producer 1 floods tenant `noisy` (and a `capped` tenant with
 * a cap of 3); once that is in, producer 2 adds 10 light tenants' jobs. Measures end-to-end
 * throughput, the light tenants' waits, the most jobs of one tenant running at once, and
 * counts every job (nothing lost). Writes bench/results/scaleout.json.
 *
 *   npm run bench:scaleout        (FLOOD=20000 CONCURRENCY=10 JOB_MS=2 by default)
 */
import 'reflect-metadata';
import { ChildProcess } from 'node:child_process';
import type { INestApplicationContext } from '@nestjs/common';
import IORedis from 'ioredis';
import { TenantFairness } from '../../lib';
import { bootScaleoutApp } from '../../test/fixtures/scaleout-app';
import { SCALEOUT_QUEUE, ScaleoutBatch, scaleoutKeys } from '../../test/fixtures/scaleout-shared';
import { ask, forkFixture, killAll } from '../../test/support/processes';
import { startRedis } from '../../test/support/redis-server';
import { machine, percentile, table, updateBenchmarksPage, writeResult } from '../bench-utils';

const FLOOD = Number(process.env.FLOOD ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 10);
const JOB_MS = Number(process.env.JOB_MS ?? 2);
const CAPPED = 300;
const CAP = 3;
const LIGHT = Array.from({ length: 10 }, (_, i) => `light-${i}`);
const LIGHT_JOBS = 20;

type Mode = 'plain' | 'module';

async function runMode(mode: Mode, redis: IORedis) {
  const prefix = `so${mode}${Math.random().toString(36).slice(2, 8)}`;
  const keys = scaleoutKeys(prefix);
  const env = { TQ_PREFIX: prefix, TQ_CONCURRENCY: String(CONCURRENCY), TQ_MODE: mode };
  const children: ChildProcess[] = [];
  let app: INestApplicationContext | undefined;
  try {
    const [workers, producers] = await Promise.all([
      Promise.all([1, 2, 3, 4].map(() => forkFixture('scaleout-worker.ts', env, children))),
      Promise.all([1, 2].map(() => forkFixture('scaleout-producer.ts', env, children))),
    ]);
    if (mode === 'module') {
      app = await bootScaleoutApp(prefix, []);
      await app.get(TenantFairness).setConcurrency(SCALEOUT_QUEUE, 'capped', CAP);
    }
    const flood: ScaleoutBatch[] = [
      { tenantId: 'noisy', count: FLOOD, kind: 'ok', ms: JOB_MS },
      { tenantId: 'capped', count: CAPPED, kind: 'ok', ms: JOB_MS },
    ];
    const light: ScaleoutBatch[] = LIGHT.map((tenantId) => ({
      tenantId,
      count: LIGHT_JOBS,
      kind: 'ok',
      ms: JOB_MS,
    }));
    const total = FLOOD + CAPPED + LIGHT.length * LIGHT_JOBS;
    const start = Date.now();
    for (const worker of workers) worker.send('run');
    await ask(producers[0], { batches: flood });
    await ask(producers[1], { batches: light });
    const deadline = Date.now() + 10 * 60_000;
    while (Number(await redis.hget(keys.outcomes, 'completed')) < total) {
      if (Date.now() > deadline) throw new Error(`${mode}: not every job completed`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (Date.now() - start) / 1000;
    const enqueued = Number(await redis.hget(keys.enqueued, 'ok'));
    const completed = Number(await redis.hget(keys.outcomes, 'completed'));
    const waits = new Map<string, number[]>();
    for (const entry of await redis.lrange(keys.waits, 0, -1)) {
      const [tenant, ms] = entry.split('|');
      const group = tenant.startsWith('light-') ? 'light' : tenant;
      waits.set(group, [...(waits.get(group) ?? []), Number(ms)]);
    }
    const max = await redis.hgetall(keys.max);
    const lightWaits = waits.get('light') ?? [];
    return {
      mode,
      seconds: +seconds.toFixed(2),
      jobsPerSecond: Math.round(total / seconds),
      enqueued,
      completed,
      lost: enqueued - completed,
      ranOnce: Object.values(await redis.hgetall(keys.runs)).filter((n) => n === '1').length,
      lightWaitMs: { p50: percentile(lightWaits, 50), p99: percentile(lightWaits, 99) },
      noisyWaitP50Ms: percentile(waits.get('noisy') ?? [0], 50),
      mostRunningAtOnce: { noisy: Number(max.noisy), capped: Number(max.capped) },
    };
  } finally {
    await killAll(children);
    await app?.close();
  }
}

async function main() {
  const server = await startRedis();
  process.env.REDIS_URL = server.url;
  delete process.env.TQ_REDIS_CLUSTER_NODES;
  const redis = new IORedis(server.url);
  const runs: Awaited<ReturnType<typeof runMode>>[] = [];
  try {
    for (const mode of (process.env.MODES ?? 'plain,module').split(',') as Mode[]) {
      runs.push(await runMode(mode, redis));
      console.log(JSON.stringify(runs.at(-1)));
    }
  } finally {
    await redis.quit();
    await server.stop();
  }
  const [plain, fair] = runs;
  const ratios = {
    throughputVsPlain: +(fair.jobsPerSecond / plain.jobsPerSecond).toFixed(2),
    lightWaitP99VsPlain: +(fair.lightWaitMs.p99 / plain.lightWaitMs.p99).toFixed(4),
  };
  const settings = {
    workers: 4,
    producers: 2,
    concurrencyPerWorker: CONCURRENCY,
    flood: FLOOD,
    capped: { jobs: CAPPED, cap: CAP },
    light: { tenants: LIGHT.length, jobsEach: LIGHT_JOBS },
    jobMs: JOB_MS,
  };
  const file = writeResult('scaleout', { settings, ratios, runs });
  console.log(JSON.stringify(ratios));
  console.log(`written to ${file}`);
  const m = machine();
  updateBenchmarksPage(
    'scaleout',
    [
      table(
        [
          '4 workers + 2 producers',
          'jobs/s',
          'light p50 wait',
          'light p99 wait',
          `most \`capped\` running (cap ${CAP})`,
          'lost',
        ],
        runs.map((run) => [
          run.mode === 'plain' ? 'plain BullMQ' : 'this module (fairness on)',
          run.jobsPerSecond,
          `${run.lightWaitMs.p50} ms`,
          `${run.lightWaitMs.p99} ms`,
          run.mode === 'plain'
            ? `${run.mostRunningAtOnce.capped} (no cap)`
            : run.mostRunningAtOnce.capped,
          run.lost,
        ]),
      ),
      '',
      `Throughput ${ratios.throughputVsPlain}x plain BullMQ, light tenants' p99 wait ` +
        `${ratios.lightWaitP99VsPlain}x (same run: ${FLOOD.toLocaleString('en')} jobs of tenant ` +
        `\`noisy\` then ${LIGHT.length} light tenants x ${LIGHT_JOBS}, ${JOB_MS} ms jobs, concurrency ` +
        `${CONCURRENCY} per worker; ${m.cpus} x ${m.cpuModel}, Node ${m.node}). ` +
        '`npm run bench:scaleout`, `bench/results/scaleout.json`.',
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
