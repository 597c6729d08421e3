/**
 * Fair gate bench: plain BullMQ vs this module, same Redis, same run.
 *   npx ts-node --transpile-only bench/fairness/fairness.bench.ts [--flood100k]
 *     [--only=noisy|throughput|jain|modes|scenarios|drain, or several: --only=noisy,throughput]
 * Starts its own redis-server on a free port; writes bench/results/fairness.json (`drain` alone:
 * bench/results/fairness-drain.json and its block of docs/benchmarks.md).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import { fairDequeueScenarios, scenariosMarkdown } from './fair-dequeue.scenario';
import { floorScenario } from './floor.scenario';
import { modesCostScenario } from './modes-cost.scenario';
import { timeShareScenario } from './time-share.scenario';
import { startRedis } from '../../test/support/redis-server';
import {
  load1,
  loadWarning,
  machine,
  table,
  updateBenchmarksPage,
  writeResult,
} from '../bench-utils';
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
import type { TenantFairnessOptions } from '../../lib';

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/**
 * A floods, then B enqueues 10 jobs; B's wait is enqueue -> start. `aStartedWhileBWaited` counts
 * A's jobs started between B's enqueue and B's last start: the jobs B queued behind, a figure
 * that does not depend on machine load. `kind` is what each job does for 1 ms: burn CPU (busy)
 * or wait on a timer.
 */
async function noisyNeighbour(side: Side, flood: number, kind: 'busy' | 'timer') {
  const waits: number[] = [];
  let bEnqueuedAt = Infinity;
  let aStartedWhileBWaited = 0;
  const loadAtStart = load1();
  work.handle = (data: BenchJob) => {
    if (data.tenant === 'B') waits.push(Date.now() - data.t0);
    else if (Date.now() >= bEnqueuedAt && waits.length < 10) aStartedWhileBWaited++;
    if (kind === 'busy') return busy(1);
    return sleep(1);
  };
  side.run();
  await side.enqueue('A', flood);
  bEnqueuedAt = Date.now();
  await side.enqueue('B', 10);
  await until(() => waits.length === 10, 600_000);
  const result = {
    side: side.label,
    kind,
    flood,
    bWaitP50Ms: percentile(waits, 50),
    bWaitP99Ms: percentile(waits, 99),
    aStartedWhileBWaited,
    loadAtStart,
    loadAtEnd: load1(),
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
  const stats = new Redis(connection);
  const results: Record<string, unknown> = {
    command: `npx ts-node --transpile-only bench/fairness/fairness.bench.ts${flood100k ? ' --flood100k' : ''}`,
    startedAt: new Date().toISOString(),
    loadAverageAtStart: loadavg().map((l) => Number(l.toFixed(2))),
  };
  try {
    const log = (row: unknown) => console.log(JSON.stringify(row));
    const onlyArg = process.argv.find((arg) => arg.startsWith('--only='))?.slice(7);
    const parts = onlyArg?.split(',');
    if (onlyArg) results.command = `${results.command} --only=${onlyArg}`;
    const runs = (part: string) => !parts || parts.includes(part);
    const noisy = [];
    // Latency variants: turns at add (the default), and every job through the gate
    // (priorityByTurn: false) with the default window (4 x concurrency) and one shrunk toward
    // the concurrency. (NOISY_DEFAULT_ONLY=1: the defaults alone.)
    const variants: TenantFairnessOptions[] = process.env.NOISY_DEFAULT_ONLY
      ? [{}]
      : [{}, { priorityByTurn: false }, { windowPerSlot: 2, priorityByTurn: false }];
    if (runs('noisy')) {
      for (const kind of ['busy', 'timer'] as const) {
        for (const fairness of variants) {
          noisy.push(
            await noisyNeighbour(await moduleSide(connection, 10, fairness), 20_000, kind),
          );
          log(noisy.at(-1));
        }
        // The defaults again with the producer in its own process (the workers' process then
        // spends nothing on enqueueing A's flood).
        noisy.push(
          await noisyNeighbour(
            await moduleSide(connection, 10, {}, { producer: 'process' }),
            20_000,
            kind,
          ),
        );
        log(noisy.at(-1));
        if (process.env.NOISY_PLAIN !== '0') {
          noisy.push(await noisyNeighbour(await plainSide(connection, 10), 20_000, kind));
          log(noisy.at(-1));
        }
        if (flood100k) {
          noisy.push(await noisyNeighbour(await moduleSide(connection, 10, {}), 100_000, kind));
          log(noisy.at(-1));
        }
      }
    }
    results.noisyNeighbour = noisy;

    // Alternating rounds: each variant once per round, in the same order, one Redis.
    const rounds = [];
    const roundCount = Number(process.env.ROUNDS ?? 3);
    for (let round = 0; round < (runs('throughput') ? roundCount : 0); round++) {
      const loadAtStart = load1();
      const plain = await throughput(await plainSide(connection, 50), 1, 20_000, stats);
      // BullMQ's own priorities, turns by hand: what serving from its prioritized set costs.
      const plainByTurn = await throughput(
        await plainSide(connection, 50, true),
        1000,
        20_000,
        stats,
      );
      const off = await throughput(await moduleSide(connection, 50, false), 1, 20_000, stats);
      const on1 = await throughput(await moduleSide(connection, 50, {}), 1, 20_000, stats);
      const on1000 = await throughput(await moduleSide(connection, 50, {}), 1000, 20_000, stats);
      const gate = await throughput(
        await moduleSide(connection, 50, { priorityByTurn: false }),
        1000,
        20_000,
        stats,
      );
      // A backlog drained: 20k jobs over 1,000 tenants all enqueued, then the workers start.
      const plainDrain = await throughput(
        await plainSide(connection, 50),
        1000,
        20_000,
        stats,
        true,
      );
      const plainDrainByTurn = await throughput(
        await plainSide(connection, 50, true),
        1000,
        20_000,
        stats,
        true,
      );
      const drain1000 = await throughput(
        await moduleSide(connection, 50, {}),
        1000,
        20_000,
        stats,
        true,
      );
      const drainGate = await throughput(
        await moduleSide(connection, 50, { priorityByTurn: false }),
        1000,
        20_000,
        stats,
        true,
      );
      const drainOff = await throughput(
        await moduleSide(connection, 50, false),
        1000,
        20_000,
        stats,
        true,
      );
      const row = {
        round,
        plainDrainJobsPerSecond: plainDrain.jobsPerSecond,
        drain1000TenantsJobsPerSecond: drain1000.jobsPerSecond,
        drainRatio1000Tenants: Number(
          (drain1000.jobsPerSecond / plainDrain.jobsPerSecond).toFixed(2),
        ),
        drainRatioBullmqPriorities: Number(
          (plainDrainByTurn.jobsPerSecond / plainDrain.jobsPerSecond).toFixed(2),
        ),
        drainRatio1000TenantsGateOnly: Number(
          (drainGate.jobsPerSecond / plainDrain.jobsPerSecond).toFixed(2),
        ),
        drainRatioModuleFairnessOff: Number(
          (drainOff.jobsPerSecond / plainDrain.jobsPerSecond).toFixed(2),
        ),
        loadAtStart,
        loadAtEnd: load1(),
        plainJobsPerSecond: plain.jobsPerSecond,
        moduleFairnessOffJobsPerSecond: off.jobsPerSecond,
        fairness1TenantJobsPerSecond: on1.jobsPerSecond,
        fairness1000TenantsJobsPerSecond: on1000.jobsPerSecond,
        ratio1Tenant: Number((on1.jobsPerSecond / plain.jobsPerSecond).toFixed(2)),
        ratio1000Tenants: Number((on1000.jobsPerSecond / plain.jobsPerSecond).toFixed(2)),
        ratio1000TenantsGateOnly: Number((gate.jobsPerSecond / plain.jobsPerSecond).toFixed(2)),
        ratioBullmqPriorities: Number((plainByTurn.jobsPerSecond / plain.jobsPerSecond).toFixed(2)),
        ratio1000VsModuleOff: Number((on1000.jobsPerSecond / off.jobsPerSecond).toFixed(2)),
        nodeCpuMicrosPerJob: {
          plain: plain.cpuMicrosPerJob,
          moduleFairnessOff: off.cpuMicrosPerJob,
          fairness1Tenant: on1.cpuMicrosPerJob,
          fairness1000Tenants: on1000.cpuMicrosPerJob,
          fairness1000TenantsGateOnly: gate.cpuMicrosPerJob,
          plainByTurn: plainByTurn.cpuMicrosPerJob,
          plainDrain: plainDrain.cpuMicrosPerJob,
          plainDrainByTurn: plainDrainByTurn.cpuMicrosPerJob,
          drain1000Tenants: drain1000.cpuMicrosPerJob,
          drain1000TenantsGateOnly: drainGate.cpuMicrosPerJob,
          drainModuleFairnessOff: drainOff.cpuMicrosPerJob,
        },
        redisPerJob: Object.fromEntries(
          (
            [
              ['plain', plain],
              ['moduleFairnessOff', off],
              ['fairness1Tenant', on1],
              ['fairness1000Tenants', on1000],
              ['fairness1000TenantsGateOnly', gate],
              ['plainByTurn', plainByTurn],
              ['plainDrain', plainDrain],
              ['plainDrainByTurn', plainDrainByTurn],
              ['drain1000Tenants', drain1000],
              ['drain1000TenantsGateOnly', drainGate],
              ['drainModuleFairnessOff', drainOff],
            ] as const
          ).map(([name, run]) => [
            name,
            {
              cpuMicros: run.redisMicrosPerJob,
              commands: run.commandsPerJob,
              scriptMicros: run.scriptMicrosPerJob,
            },
          ]),
        ),
      };
      log(row);
      rounds.push(row);
    }
    results.throughput = rounds;

    // The backlog drain alone, in paired rounds (DRAIN_ROUNDS, 8): plain BullMQ, BullMQ's own
    // priorities (the ceiling of turns at add), the fair queue and the module without fairness,
    // in A B C D then D C B A order so a drift of the machine falls
    // on every side alike; one round's ratio moves by +-10-20 % on a shared host, the median of
    // the rounds much less. Only with `--only=drain` (the throughput rounds have one drain each).
    if (parts?.includes('drain')) {
      results.drain = await drainRounds(connection, stats, Number(process.env.DRAIN_ROUNDS ?? 8));
      log(results.drain);
    }

    results.jain = runs('jain')
      ? [
          await jain(await moduleSide(connection, 10, {})),
          await jain(await plainSide(connection, 10)),
        ]
      : [];
    log(results.jain);

    // Issue 18's modes, each against the gate without it in the same run.
    if (runs('modes')) {
      results.modes = {
        timeShare: await timeShareScenario(Number(process.env.ROUNDS ?? 3)),
        floor: await floorScenario(connection, { rounds: Number(process.env.ROUNDS ?? 3) }),
        cost: await modesCostScenario(Number(process.env.ROUNDS ?? 3)),
      };
      log(results.modes);
    }
    // Trigger.dev's six fair-dequeue scenarios, by tenant and by fair key, against BullMQ's FIFO
    // and priorities (fair-dequeue.scenario.ts).
    if (runs('scenarios')) {
      const scenarios = await fairDequeueScenarios(Number(process.env.TRIALS ?? 2));
      writeResult('fairness-scenarios', scenarios);
      updateBenchmarksPage('fairness-scenarios', scenariosMarkdown(scenarios));
      results.scenarios = 'bench/results/fairness-scenarios.json';
    }
    results.loadAverageAtEnd = loadavg().map((l) => Number(l.toFixed(2)));
    const dir = join(__dirname, '..', 'results');
    mkdirSync(dir, { recursive: true });
    if (results.modes) {
      writeFileSync(
        join(dir, 'fairness-modes.json'),
        `${JSON.stringify({ startedAt: results.startedAt, loadAverageAtStart: results.loadAverageAtStart, ...(results.modes as object) }, null, 2)}\n`,
      );
    }
    // `--only=modes`, `--only=scenarios` or `--only=drain` leaves the main results of the last
    // full run alone.
    const own = ['modes', 'scenarios', 'drain'];
    if (!parts || parts.some((part) => !own.includes(part))) {
      writeFileSync(join(dir, 'fairness.json'), `${JSON.stringify(results, null, 2)}\n`);
    }
  } finally {
    stats.disconnect();
    await redis.stop();
  }
}

/** The middle value (the mean of the two middle ones for an even count). */
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** One drain per side and round, 20,000 no-op jobs over 1,000 tenants, concurrency 50. */
async function drainRounds(
  connection: object,
  stats: Redis,
  roundCount: number,
): Promise<Record<string, unknown>> {
  const startedAt = new Date().toISOString();
  const loadAtStart = load1();
  const sides = {
    plain: () => plainSide(connection, 50),
    bullmqPriorities: () => plainSide(connection, 50, true),
    fair: () => moduleSide(connection, 50, {}),
    moduleFairnessOff: () => moduleSide(connection, 50, false),
  };
  type Name = keyof typeof sides;
  const order: Name[] = ['plain', 'bullmqPriorities', 'fair', 'moduleFairnessOff'];
  const rounds: Record<Name, Awaited<ReturnType<typeof throughput>>>[] = [];
  for (let round = 0; round < roundCount; round++) {
    const row = {} as Record<Name, Awaited<ReturnType<typeof throughput>>>;
    for (const name of round % 2 === 0 ? order : [...order].reverse()) {
      row[name] = await throughput(await sides[name](), 1000, 20_000, stats, true);
    }
    rounds.push(row);
    console.log(
      JSON.stringify({
        round,
        ...Object.fromEntries(order.map((name) => [name, row[name].jobsPerSecond])),
        load: load1(),
      }),
    );
  }
  const ratios = (name: Name) =>
    rounds.map((row) => Number((row[name].jobsPerSecond / row.plain.jobsPerSecond).toFixed(2)));
  const per = (name: Name) => ({
    jobsPerSecondMedian: Math.round(median(rounds.map((row) => row[name].jobsPerSecond))),
    nodeCpuMicrosPerJobMedian: Math.round(median(rounds.map((row) => row[name].cpuMicrosPerJob))),
    redisCpuMicrosPerJobMedian: Number(
      median(rounds.map((row) => row[name].redisMicrosPerJob ?? 0)).toFixed(1),
    ),
    redisCommandsPerJobMedian: Number(
      median(rounds.map((row) => row[name].commandsPerJob ?? 0)).toFixed(2),
    ),
  });
  const result = {
    command:
      (roundCount === 8 ? '' : `DRAIN_ROUNDS=${roundCount} `) +
      'npx ts-node --transpile-only bench/fairness/fairness.bench.ts --only=drain',
    startedAt,
    rounds: roundCount,
    loadAtStart,
    loadAtEnd: load1(),
    fairRatios: ratios('fair'),
    fairRatioMedian: Number(median(ratios('fair')).toFixed(3)),
    moduleFairnessOffRatios: ratios('moduleFairnessOff'),
    moduleFairnessOffRatioMedian: Number(median(ratios('moduleFairnessOff')).toFixed(3)),
    bullmqPrioritiesRatios: ratios('bullmqPriorities'),
    bullmqPrioritiesRatioMedian: Number(median(ratios('bullmqPriorities')).toFixed(3)),
    plain: per('plain'),
    bullmqPriorities: per('bullmqPriorities'),
    fair: per('fair'),
    moduleFairnessOff: per('moduleFairnessOff'),
  };
  writeResult('fairness-drain', result);
  updateBenchmarksPage('fairness-drain', drainMarkdown(result));
  return result;
}

/** The machine in a few words: cores, CPU model, Node, Redis. */
function host(): string {
  const m = machine();
  const redis = /v=(\S+)/.exec(m.redis)?.[1] ?? m.redis;
  return `${m.cpus} x ${m.cpuModel}, Node ${m.node}, Redis ${redis}`;
}

function drainMarkdown(r: {
  command: string;
  rounds: number;
  startedAt: string;
  loadAtStart: number;
  loadAtEnd: number;
  fairRatios: number[];
  fairRatioMedian: number;
  moduleFairnessOffRatios: number[];
  moduleFairnessOffRatioMedian: number;
  bullmqPrioritiesRatios: number[];
  bullmqPrioritiesRatioMedian: number;
  plain: Record<string, number>;
  bullmqPriorities: Record<string, number>;
  fair: Record<string, number>;
  moduleFairnessOff: Record<string, number>;
}): string {
  const row = (label: string, side: Record<string, number>, ratios: string) => [
    label,
    side.jobsPerSecondMedian,
    ratios,
    side.nodeCpuMicrosPerJobMedian,
    side.redisCpuMicrosPerJobMedian,
    side.redisCommandsPerJobMedian,
  ];
  const goal = r.fairRatioMedian >= 0.85 ? 'met' : 'not met';
  return [
    table(
      [
        'side',
        'jobs/s (median)',
        'of plain, each round (median)',
        'Node CPU µs / job',
        'Redis CPU µs / job',
        'Redis commands / job',
      ],
      [
        row('plain BullMQ', r.plain, '1'),
        row(
          'fair queue, `fairness: {}`',
          r.fair,
          `${r.fairRatios.join(' · ')} (**${r.fairRatioMedian}**)`,
        ),
        row(
          'the module without fairness',
          r.moduleFairnessOff,
          `${r.moduleFairnessOffRatios.join(' · ')} (${r.moduleFairnessOffRatioMedian})`,
        ),
        row(
          "plain BullMQ, BullMQ's priorities (priority = the job's turn in its tenant)",
          r.bullmqPriorities,
          `${r.bullmqPrioritiesRatios.join(' · ')} (${r.bullmqPrioritiesRatioMedian})`,
        ),
      ],
    ),
    '',
    `Goal: a drain at >= 0.85 of plain BullMQ: ${goal} (median of ${r.rounds} paired rounds). ` +
      `A backlog of 20,000 no-op jobs (data \`{ t0, tenant }\`) over 1,000 tenants, all enqueued, ` +
      `then workers at concurrency 50; each round drains every side once, in A B C D then D C B A ` +
      `order, on one private redis-server; per-job figures are medians over the rounds. ` +
      `${host()}; load ${r.loadAtStart}-${r.loadAtEnd}; ${r.startedAt.slice(0, 16)} UTC. ` +
      `\`${r.command}\`, ` +
      '`bench/results/fairness-drain.json`.',
    ...[loadWarning(r.loadAtStart, r.loadAtEnd)].filter(Boolean).map((w) => `\n${w}`),
  ].join('\n');
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
