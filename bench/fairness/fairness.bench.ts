/**
 * Fair gate bench: plain BullMQ vs this module, same Redis, same run.
 *   npx ts-node --transpile-only bench/fairness/fairness.bench.ts [--flood100k]
 * Starts its own redis-server on a free port; writes bench/results/fairness.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startRedis } from '../../test/support/redis-server';
import {
  BenchJob,
  Side,
  busy,
  moduleSide,
  plainSide,
  throughput,
  until,
  work,
} from './fairness-harness';

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/**
 * A floods, then B enqueues 10 jobs; B's wait is enqueue -> start. `aStartedWhileBWaited` counts
 * A's jobs started between B's enqueue and B's last start: the jobs B queued behind, a figure
 * that does not depend on machine load.
 */
async function noisyNeighbour(side: Side, flood: number) {
  const waits: number[] = [];
  let bEnqueuedAt = Infinity;
  let aStartedWhileBWaited = 0;
  work.handle = (data: BenchJob) => {
    if (data.tenant === 'B') waits.push(Date.now() - data.t0);
    else if (Date.now() >= bEnqueuedAt && waits.length < 10) aStartedWhileBWaited++;
    busy(1);
  };
  side.run();
  await side.enqueue('A', flood);
  bEnqueuedAt = Date.now();
  await side.enqueue('B', 10);
  await until(() => waits.length === 10, 600_000);
  const result = {
    side: side.label,
    flood,
    bWaitP50Ms: percentile(waits, 50),
    bWaitP99Ms: percentile(waits, 99),
    aStartedWhileBWaited,
  };
  await side.close();
  return result;
}

/** 100 equally weighted tenants, 100 jobs each, all backlogged; Jain's index over the first half. */
async function jain(side: Side) {
  const order: string[] = [];
  work.handle = (data: BenchJob) => {
    order.push(data.tenant);
  };
  for (let t = 0; t < 100; t++) await side.enqueue(`t${t}`, 100);
  side.run();
  await until(() => order.length >= 5000, 300_000);
  const counts = new Map<string, number>();
  for (let t = 0; t < 100; t++) counts.set(`t${t}`, 0);
  for (const tenant of order.slice(0, 5000)) counts.set(tenant, counts.get(tenant)! + 1);
  const x = [...counts.values()];
  const sum = x.reduce((a, b) => a + b, 0);
  const index = (sum * sum) / (x.length * x.reduce((a, b) => a + b * b, 0));
  await side.close();
  return { side: side.label, tenants: 100, window: 5000, jainIndex: Number(index.toFixed(4)) };
}

async function main() {
  const flood100k = process.argv.includes('--flood100k');
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const results: Record<string, unknown> = {
    command: `npx ts-node --transpile-only bench/fairness/fairness.bench.ts${flood100k ? ' --flood100k' : ''}`,
    startedAt: new Date().toISOString(),
    loadAverageAtStart: loadavg().map((l) => Number(l.toFixed(2))),
  };
  try {
    const log = (row: unknown) => console.log(JSON.stringify(row));
    const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice(7);
    const noisy = [];
    if (!only || only === 'noisy') {
      noisy.push(await noisyNeighbour(await moduleSide(connection, 10, {}), 20_000));
      log(noisy.at(-1));
      noisy.push(
        await noisyNeighbour(await moduleSide(connection, 10, { windowPerSlot: 1 }), 20_000),
      );
      log(noisy.at(-1));
      noisy.push(await noisyNeighbour(await plainSide(connection, 10), 20_000));
      log(noisy.at(-1));
      if (flood100k) {
        noisy.push(await noisyNeighbour(await moduleSide(connection, 10, {}), 100_000));
        log(noisy.at(-1));
        noisy.push(
          await noisyNeighbour(await moduleSide(connection, 10, { windowPerSlot: 1 }), 100_000),
        );
        log(noisy.at(-1));
      }
    }
    results.noisyNeighbour = noisy;

    const rounds = [];
    for (let round = 0; round < (!only || only === 'throughput' ? 3 : 0); round++) {
      const plain = await throughput(await plainSide(connection, 50), 1, 20_000);
      const off = await throughput(await moduleSide(connection, 50, false), 1, 20_000);
      const on1 = await throughput(await moduleSide(connection, 50, {}), 1, 20_000);
      const on1000 = await throughput(await moduleSide(connection, 50, {}), 1000, 20_000);
      const row = {
        round,
        plainJobsPerSecond: plain.jobsPerSecond,
        moduleFairnessOffJobsPerSecond: off.jobsPerSecond,
        fairness1TenantJobsPerSecond: on1.jobsPerSecond,
        fairness1000TenantsJobsPerSecond: on1000.jobsPerSecond,
        ratio1Tenant: Number((on1.jobsPerSecond / plain.jobsPerSecond).toFixed(2)),
        ratio1000Tenants: Number((on1000.jobsPerSecond / plain.jobsPerSecond).toFixed(2)),
        ratio1000VsModuleOff: Number((on1000.jobsPerSecond / off.jobsPerSecond).toFixed(2)),
        nodeCpuMicrosPerJob: {
          plain: plain.cpuMicrosPerJob,
          moduleFairnessOff: off.cpuMicrosPerJob,
          fairness1Tenant: on1.cpuMicrosPerJob,
          fairness1000Tenants: on1000.cpuMicrosPerJob,
        },
      };
      log(row);
      rounds.push(row);
    }
    results.throughput = rounds;

    results.jain =
      !only || only === 'jain'
        ? [
            await jain(await moduleSide(connection, 10, {})),
            await jain(await plainSide(connection, 10)),
          ]
        : [];
    log(results.jain);
    results.loadAverageAtEnd = loadavg().map((l) => Number(l.toFixed(2)));
    const dir = join(__dirname, '..', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'fairness.json'), `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
