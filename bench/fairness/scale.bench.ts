/**
 * Scale: N jobs (1,000,000 by default) enqueued, then drained, on a fair queue over 1,000, 10,000
 * and 100,000 tenants, and the same N through plain BullMQ and through the module without
 * fairness; each side on a redis-server of its own, started fresh.
 *   npm run bench:scale -- --jobs 1000000 --tenants 1000,10000,100000
 *   (--concurrency 50, --batch 10 jobs per addBulk call, --inflight 16 calls at once,
 *    --tail-ms 3000, --sides plain,off,fair, --rounds 1, --progress-ms 30000, --gauges,
 *    --payload-bytes 0, --name scale)
 * Writes bench/results/<name>.json and its block of docs/benchmarks.md.
 *
 * Every side enqueues the same calls: `addBulk` of `batch` jobs of one tenant, the tenants taken
 * in turn (call c is tenant c mod T), `inflight` calls at once, no worker running. Then the
 * workers start and drain them all. Per phase, from the bench's own redis-server: Redis CPU
 * (`INFO cpu`) and commands (`INFO commandstats`, those inside scripts included) per job, and
 * this process's CPU (producer and workers are one process) per job:
 * - enqueue: the adds (a fair queue admits its first window into BullMQ here);
 * - admission + drain: workers start until the last job completed (the gate admits as it
 *   releases: one script call does both, so the two are not told apart by time);
 * - release: `tail-ms` after the last job: what the gate does to give back the last slots and
 *   drop idle tenants, and the memory it leaves behind.
 * Redis memory per queued job is `used_memory` after the enqueue minus before, over N.
 */
import Redis from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedis } from '../../test/support/redis-server';
import {
  RedisWork,
  load1,
  loadWarning,
  machine,
  redisPerJob,
  redisWork,
  runScript,
  table,
  updateBenchmarksPage,
  writeResult,
} from '../bench-utils';
import { ModuleSideExtra, Side, moduleSide, plainSide, work } from './fairness-harness';

interface ScaleOptions {
  jobs: number;
  tenants: number[];
  concurrency: number;
  batch: number;
  inflight: number;
  tailMs: number;
  sides: string[];
  rounds: number;
  /** How often the drain prints how far it got. */
  progressMs: number;
  /** Keep the module's metrics gauges on (they are off by default here: see `moduleExtra`). */
  gauges: boolean;
  /**
   * Filler bytes in each job's data. With none, a plain BullMQ job's hash stays a listpack (every
   * field <= 64 bytes, `hash-max-listpack-value`): 176 bytes; the module's envelope makes its data
   * field longer, so Redis keeps the hash as a hashtable (657). With a payload over ~64 bytes,
   * plain BullMQ's job is a hashtable too (593 with 100 bytes of data).
   */
  payloadBytes: number;
  /** Where the run goes: bench/results/<name>.json and the <!-- bench:<name> --> block. */
  name: string;
}

function options(argv: string[]): ScaleOptions {
  const value = (name: string) => {
    const at = argv.indexOf(`--${name}`);
    const inline = argv.find((arg) => arg.startsWith(`--${name}=`));
    return inline ? inline.slice(name.length + 3) : at >= 0 ? argv[at + 1] : undefined;
  };
  const number = (name: string, fallback: number) => Number(value(name) ?? fallback);
  return {
    jobs: number('jobs', 1_000_000),
    tenants: (value('tenants') ?? '1000,10000,100000').split(',').map(Number),
    concurrency: number('concurrency', 50),
    batch: number('batch', 10),
    inflight: number('inflight', 16),
    tailMs: number('tail-ms', 3000),
    sides: (value('sides') ?? 'plain,off,fair').split(','),
    rounds: number('rounds', 1),
    progressMs: number('progress-ms', 30_000),
    gauges: argv.includes('--gauges'),
    payloadBytes: number('payload-bytes', 0),
    name: value('name') ?? 'scale',
  };
}

/** A reading at a phase boundary: Redis work, Redis memory and keys, this process's CPU. */
interface Reading {
  work: RedisWork;
  usedMemory: number;
  keys: number;
  cpu: NodeJS.CpuUsage;
  at: number;
}

async function read(client: Redis): Promise<Reading> {
  const [work, memory, keys] = await Promise.all([
    redisWork(client),
    client.info('memory'),
    client.dbsize(),
  ]);
  return {
    work,
    usedMemory: Number(/^used_memory:(\d+)/m.exec(memory)?.[1] ?? 0),
    keys,
    cpu: process.cpuUsage(),
    at: performance.now(),
  };
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));
const signed = (value: number) => `${value >= 0 ? '+' : ''}${value}`;

/** The cost of one phase, per job. */
function phase(from: Reading, to: Reading, jobs: number) {
  const redis = redisPerJob(from.work, to.work, jobs);
  const cpu = to.cpu.user + to.cpu.system - (from.cpu.user + from.cpu.system);
  const seconds = (to.at - from.at) / 1000;
  return {
    seconds: round(seconds, 2),
    jobsPerSecond: Math.round(jobs / seconds),
    redisCpuMicrosPerJob: round(redis.redisMicrosPerJob, 2),
    commandsPerJob: round(redis.commandsPerJob, 2),
    scriptCallsPerJob: round(redis.scriptCallsPerJob, 3),
    nodeCpuMicrosPerJob: round(cpu / jobs, 2),
  };
}

/** Runs `tasks` with at most `limit` at once. */
async function pooled(count: number, limit: number, task: (i: number) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
}

interface SideSpec {
  name: 'plain' | 'off' | 'fair';
  label: string;
  tenants: number;
  make(connection: object, concurrency: number): Promise<Side>;
}

async function runSide(spec: SideSpec, o: ScaleOptions) {
  const server = await startRedis();
  const connection = { host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null };
  const client = new Redis(connection);
  const loadAtStart = load1();
  try {
    const side = await spec.make(connection, o.concurrency);
    // Fewer jobs than tenants x batch (a short run): smaller calls, so every tenant has jobs.
    const batch = Math.max(1, Math.min(o.batch, Math.floor(o.jobs / spec.tenants)));
    const calls = Math.ceil(o.jobs / batch);
    const jobs = Math.min(o.jobs, calls * batch);
    let done = 0;
    let drained: () => void = () => undefined;
    const allDone = new Promise<void>((resolve) => (drained = resolve));
    work.handle = () => {
      if (++done === jobs) drained();
    };
    const pad = 'x'.repeat(o.payloadBytes);
    const r0 = await read(client);
    await pooled(calls, o.inflight, async (call) => {
      const tenant = `t${call % spec.tenants}`;
      const t0 = Date.now();
      const size = Math.min(batch, jobs - call * batch);
      await side.addJobs(
        tenant,
        Array.from({ length: size }, () => ({
          data: o.payloadBytes ? { t0, tenant, pad } : { t0, tenant },
        })),
      );
    });
    const r1 = await read(client);
    console.log(`${spec.label}: enqueued ${jobs} in ${((r1.at - r0.at) / 1000).toFixed(1)} s`);
    side.run();
    const progress = setInterval(
      () => console.log(`${spec.label}: ${done} of ${jobs} done`),
      o.progressMs,
    );
    await allDone;
    clearInterval(progress);
    const r2 = await read(client);
    console.log(`${spec.label}: drained in ${((r2.at - r1.at) / 1000).toFixed(1)} s`);
    await sleep(o.tailMs);
    const r3 = await read(client);
    await side.close();
    return {
      side: spec.name,
      label: spec.label,
      tenants: Math.min(spec.tenants, calls),
      jobs,
      jobsPerCall: batch,
      enqueue: phase(r0, r1, jobs),
      admissionAndDrain: phase(r1, r2, jobs),
      release: { ...phase(r2, r3, jobs), tailMs: o.tailMs },
      total: phase(r0, r3, jobs),
      memory: {
        bytesPerQueuedJob: round((r1.usedMemory - r0.usedMemory) / jobs, 1),
        usedMemoryBefore: r0.usedMemory,
        usedMemoryAfterEnqueue: r1.usedMemory,
        usedMemoryAfterDrain: r2.usedMemory,
        usedMemoryAfterRelease: r3.usedMemory,
        /** What is still there after the release phase, against before the enqueue. */
        leftBytes: r3.usedMemory - r0.usedMemory,
        keysAfterEnqueue: r1.keys,
        keysAfterRelease: r3.keys,
      },
      loadAtStart,
      loadAtEnd: load1(),
    };
  } finally {
    client.disconnect();
    await server.stop();
  }
}

type SideResult = Awaited<ReturnType<typeof runSide>>;

/**
 * The module's backlog and in-flight gauges are off unless `--gauges`: a refresh reads every
 * tenant (one gate script call each on a fair queue) every 15 s, and at 100,000 tenants that kept
 * the bench's Redis so busy that enqueues failed their 5 s bound and workers lost their locks.
 */
const moduleExtra = (o: ScaleOptions): ModuleSideExtra =>
  o.gauges ? {} : { metrics: { gaugeIntervalMs: 0 } };

function specs(o: ScaleOptions): SideSpec[] {
  const out: SideSpec[] = [];
  if (o.sides.includes('plain')) {
    out.push({
      name: 'plain',
      label: 'plain BullMQ',
      tenants: o.tenants[0],
      make: (connection, c) => plainSide(connection, c),
    });
  }
  if (o.sides.includes('off')) {
    out.push({
      name: 'off',
      label: 'module, fairness off',
      tenants: o.tenants[0],
      make: (connection, c) => moduleSide(connection, c, false, moduleExtra(o)),
    });
  }
  if (o.sides.includes('fair')) {
    for (const tenants of o.tenants) {
      out.push({
        name: 'fair',
        label: `fair queue, ${tenants.toLocaleString('en-US')} tenants`,
        tenants,
        make: (connection, c) => moduleSide(connection, c, {}, moduleExtra(o)),
      });
    }
  }
  return out;
}

/** The goals of issue 25 item 3 against one round's sides. */
function goals(sides: SideResult[]) {
  const fair = sides.filter((s) => s.side === 'fair').sort((a, b) => a.tenants - b.tenants);
  const plain = sides.find((s) => s.side === 'plain');
  const low = fair[0];
  const high = fair.at(-1);
  const ratio = (pick: (s: SideResult) => number) =>
    low && high && low !== high ? round(pick(high) / pick(low), 2) : undefined;
  const perJob = (s: SideResult) => s.total.redisCpuMicrosPerJob + s.total.nodeCpuMicrosPerJob;
  return {
    flat: {
      goal: `${high?.tenants ?? '?'} tenants cost <= 1.3x per job of ${low?.tenants ?? '?'}`,
      redisCpuRatio: ratio((s) => s.total.redisCpuMicrosPerJob),
      commandsRatio: ratio((s) => s.total.commandsPerJob),
      nodeCpuRatio: ratio((s) => s.total.nodeCpuMicrosPerJob),
      redisPlusNodeCpuRatio: ratio(perJob),
    },
    memory: {
      goal: 'memory per queued job <= plain BullMQ + 100 bytes',
      extraBytesPerJob: plain
        ? Object.fromEntries(
            sides
              .filter((s) => s !== plain)
              .map((s) => [
                s.label,
                round(s.memory.bytesPerQueuedJob - plain.memory.bytesPerQueuedJob, 1),
              ]),
          )
        : undefined,
    },
  };
}

function markdown(result: { rounds: SideResult[][]; options: ScaleOptions; command: string }) {
  const last = result.rounds.at(-1)!;
  const g = goals(last);
  const plain = last.find((s) => s.side === 'plain');
  const per = (p: ReturnType<typeof phase>) =>
    `${p.redisCpuMicrosPerJob} / ${p.commandsPerJob} / ${p.nodeCpuMicrosPerJob}`;
  const rows = last.map((s) => [
    s.label,
    s.tenants.toLocaleString('en-US'),
    `${per(s.enqueue)} (${s.enqueue.jobsPerSecond}/s)`,
    `${per(s.admissionAndDrain)} (${s.admissionAndDrain.jobsPerSecond}/s)`,
    per(s.release),
    per(s.total),
    `${s.memory.bytesPerQueuedJob}${plain && s !== plain ? ` (${signed(round(s.memory.bytesPerQueuedJob - plain.memory.bytesPerQueuedJob, 0))})` : ''}`,
    `${round(s.memory.leftBytes / 1024, 0)} KiB, ${s.memory.keysAfterRelease} keys`,
  ]);
  const verdict = (ratio: number | undefined) =>
    ratio === undefined ? 'n/a' : `${ratio}x (${ratio <= 1.3 ? 'met' : 'not met'})`;
  const fairExtra = Object.entries(g.memory.extraBytesPerJob ?? {}).filter(([label]) =>
    label.startsWith('fair'),
  );
  const m = machine();
  return [
    table(
      [
        'side',
        'tenants',
        'enqueue: Redis CPU µs / commands / Node CPU µs per job (rate)',
        'admission + drain',
        `release (${result.options.tailMs} ms after the last job)`,
        'all phases',
        'Redis bytes per queued job (vs plain)',
        'left after release',
      ],
      rows,
    ),
    '',
    `Goal: ${g.flat.goal}: Redis CPU ${verdict(g.flat.redisCpuRatio)}, commands ${verdict(g.flat.commandsRatio)}, ` +
      `Node CPU ${verdict(g.flat.nodeCpuRatio)}, Redis + Node CPU ${verdict(g.flat.redisPlusNodeCpuRatio)}. ` +
      `Goal: ${g.memory.goal}: ${fairExtra.map(([label, extra]) => `${label} ${signed(extra)} (${extra <= 100 ? 'met' : 'not met'})`).join('; ') || 'n/a'}.`,
    '',
    `\`${result.command}\`: ${last[0]?.jobs.toLocaleString('en-US')} no-op jobs per side` +
      `${result.options.payloadBytes ? ` (${result.options.payloadBytes} bytes of filler in each job's data)` : ' (data `{ t0, tenant }`)'}, ${result.options.batch} jobs per ` +
      `\`addBulk\` call of one tenant (tenants in turn), ${result.options.inflight} calls at once, then workers at concurrency ` +
      `${result.options.concurrency}; each side on a fresh private redis-server; producer and workers in one process; ` +
      `the module's metrics gauges ${result.options.gauges ? 'on' : 'off (`--gauges` turns them on)'}. ` +
      `${m.cpus} x ${m.cpuModel}, Node ${m.node}, ${m.redis.replace(/ sha=.*/, '')}; load ` +
      `${last.map((s) => `${s.loadAtStart}-${s.loadAtEnd}`).join(', ')} (per side). ` +
      `\`bench/results/${result.options.name}.json\` (round ${result.rounds.length} of ${result.rounds.length} shown).`,
    '',
    loadWarning(
      Math.min(...last.map((s) => s.loadAtStart)),
      Math.max(...last.map((s) => s.loadAtEnd)),
    ),
  ].join('\n');
}

export async function scaleBench(argv: string[]) {
  const o = options(argv);
  const command =
    `npm run bench:scale -- --jobs ${o.jobs} --tenants ${o.tenants.join(',')}` +
    (o.payloadBytes ? ` --payload-bytes ${o.payloadBytes}` : '') +
    (o.sides.join() === 'plain,off,fair' ? '' : ` --sides ${o.sides.join(',')}`) +
    (o.name === 'scale' ? '' : ` --name ${o.name}`);
  const rounds: SideResult[][] = [];
  for (let r = 0; r < o.rounds; r++) {
    const order = r % 2 ? specs(o).reverse() : specs(o);
    const sides: SideResult[] = [];
    for (const spec of order) {
      sides.push(await runSide(spec, o));
      console.log(JSON.stringify(sides.at(-1)));
    }
    rounds.push(
      sides.sort(
        (a, b) =>
          specs(o).findIndex((s) => s.label === a.label) -
          specs(o).findIndex((s) => s.label === b.label),
      ),
    );
  }
  const result = { command, options: o, rounds, goals: goals(rounds.at(-1)!) };
  writeResult(o.name, result);
  updateBenchmarksPage(o.name, markdown(result));
  return result.goals;
}

if (require.main === module) runScript(() => scaleBench(process.argv.slice(2)));
