/**
 * bench/context: no-op jobs through plain BullMQ, BullMQ + ClsService.run per job, and this
 * module (TenantQueue + @TenantProcessor), on one private Redis, in alternating rounds.
 *
 *   npm run bench:context            (JOBS=20000 CONCURRENCY=50 ROUNDS=3 by default)
 *
 * Each variant reports jobs/s, Node CPU µs/job (the whole process, during processing only) and
 * Redis CPU µs/job (`INFO cpu`) and commands/job (`INFO commandstats`) over the same window.
 * `ONLY=module PROFILE=/tmp/prof` runs one round of one variant (plain, cls, shaped, module) and
 * writes a `.cpuprofile` of its processing phase only (open it in Chrome DevTools).
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { ClsModule, ClsService } from 'nestjs-cls';
import {
  InjectTenantQueue,
  TenantContext,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../lib';
import { startRedis } from '../../test/support/redis-server';
import {
  load1,
  loadWarning,
  machine,
  median,
  redisWork,
  redisPerJob,
  table,
  updateBenchmarksPage,
  writeResult,
} from '../bench-utils';

const JOBS = Number(process.env.JOBS ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const TENANTS = 10;
const CHUNK = 1_000;
const KEEP = { count: 0 };

interface Run {
  addPerSec: number;
  processPerSec: number;
  /** Node CPU (user + system) per processed job, µs: steadier than wall time on a busy machine. */
  cpuMicrosPerJob: number;
  /** Redis server CPU per processed job (`INFO cpu`), µs. */
  redisMicrosPerJob: number;
  /** Redis commands per job (`INFO commandstats`, those inside scripts included). */
  commandsPerJob: number;
  /** Script calls (EVALSHA) per job. */
  scriptCallsPerJob: number;
}

type Variant = 'plain' | 'cls' | 'shaped' | 'module';

/** The Redis the bench measures (commandstats) and, when profiling, the inspector session. */
interface Probe {
  redis: IORedis;
  profile?: { session: Session; dir: string };
}

/** Measures the processing phase of one variant: wall time, Node CPU and Redis work. */
async function measureProcessing(
  probe: Probe,
  label: string,
  start: () => void,
  finished: Promise<number>,
): Promise<Omit<Run, 'addPerSec'>> {
  const redis0 = await redisWork(probe.redis);
  if (probe.profile) await post(probe.profile.session, 'Profiler.start');
  const t0 = performance.now();
  const cpu0 = cpuMicros();
  start();
  const t1 = await finished;
  const cpuMicrosPerJob = (cpuMicros() - cpu0) / JOBS;
  if (probe.profile) {
    const { profile } = (await post(probe.profile.session, 'Profiler.stop')) as { profile: object };
    const file = join(probe.profile.dir, `context-${label}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    console.log(`profile of ${label} written to ${file}`);
  }
  const redis = redisPerJob(redis0, await redisWork(probe.redis), JOBS);
  return { processPerSec: JOBS / ((t1 - t0) / 1000), cpuMicrosPerJob, ...redis };
}

function post(session: Session, method: string): Promise<unknown> {
  return new Promise((resolve, reject) =>
    session.post(method, (error: Error | null, result?: object) =>
      error ? reject(error) : resolve(result),
    ),
  );
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function untilCompleted(worker: Worker, total: number): Promise<number> {
  return new Promise((resolve) => {
    let done = 0;
    worker.on('completed', () => {
      if (++done === total) resolve(performance.now());
    });
  });
}

/** The `_tenant` envelope and options a module job carries, for the "plain, module-shaped" variant. */
const SHAPE_ENVELOPE = {
  v: 1,
  tenantId: 'tenant-0',
  actorType: 'user',
  actorId: 'user-1',
  enqueuedAt: new Date().toISOString(),
  correlationId: randomUUID(),
  environment: 'bench',
  strategy: 'inherited',
};
const SHAPE_OPTS = { attempts: 3, backoff: { type: 'exponential', delay: 1000, jitter: 0.5 } };

async function plain(
  connection: { host: string; port: number },
  probe: Probe,
  round: number,
  cls?: ClsService,
  shaped = false,
): Promise<Run> {
  const name = `${shaped ? 'shaped' : cls ? 'cls' : 'plain'}${round}`;
  const queue = new Queue(name, { connection, prefix: `{b:${name}}` });
  await queue.waitUntilReady();
  const t0 = performance.now();
  for (let i = 0; i < JOBS; i += CHUNK) {
    await queue.addBulk(
      Array.from({ length: Math.min(CHUNK, JOBS - i) }, (_, k) => ({
        name: 'noop',
        data: shaped
          ? { n: i + k, _tenant: SHAPE_ENVELOPE }
          : { n: i + k, tenant: `tenant-${(i + k) % TENANTS}` },
        opts: shaped ? { ...SHAPE_OPTS, jobId: randomUUID() } : undefined,
      })),
    );
  }
  const addPerSec = JOBS / ((performance.now() - t0) / 1000);
  const key = Symbol('tenant');
  const processor = cls
    ? async (job: { data: { tenant: string } }) =>
        cls.run(async () => {
          cls.set(key, job.data.tenant);
        })
    : async () => undefined;
  const worker = new Worker(name, processor, {
    connection,
    prefix: `{b:${name}}`,
    concurrency: CONCURRENCY,
    autorun: false,
    removeOnComplete: KEEP,
  });
  const processing = await measureProcessing(
    probe,
    shaped ? 'shaped' : cls ? 'cls' : 'plain',
    () => void worker.run(),
    untilCompleted(worker, JOBS),
  );
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return { addPerSec, ...processing };
}

async function tenantModule(
  connection: { host: string; port: number },
  probe: Probe,
  round: number,
): Promise<Run> {
  const name = `tq${round}`;

  @TenantProcessor(name, { concurrency: CONCURRENCY, autorun: false, removeOnComplete: KEEP })
  class NoopProcessor extends TenantWorkerHost {
    async process() {
      return undefined;
    }
  }

  @Injectable()
  class Producer {
    constructor(
      @InjectTenantQueue(name) readonly queue: TenantQueue<{ n: number }>,
      readonly tenant: TenantContext,
    ) {}
  }

  @Module({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({ connection, prefix: 'b' }),
      TenantQueueModule.registerQueue({ name }),
    ],
    providers: [NoopProcessor, Producer],
  })
  class BenchModule {}

  const app = await NestFactory.createApplicationContext(BenchModule, { logger: false });
  const { queue, tenant } = app.get(Producer);
  await queue.bullQueue.waitUntilReady();
  const t0 = performance.now();
  for (let i = 0; i < JOBS; i += CHUNK) {
    const tenantId = `tenant-${(i / CHUNK) % TENANTS}`;
    await tenant.run(tenantId, () =>
      queue.addBulk(
        Array.from({ length: Math.min(CHUNK, JOBS - i) }, (_, k) => ({
          name: 'noop',
          data: { n: i + k },
        })),
      ),
    );
  }
  const addPerSec = JOBS / ((performance.now() - t0) / 1000);
  const worker = app.get(TenantQueueRegistry).getWorker(name)!;
  const processing = await measureProcessing(
    probe,
    'module',
    () => void worker.run(),
    untilCompleted(worker, JOBS),
  );
  await queue.bullQueue.obliterate({ force: true });
  await app.close();
  return { addPerSec, ...processing };
}

const VARIANTS: Variant[] = ['plain', 'cls', 'shaped', 'module'];

async function runVariant(
  variant: Variant,
  connection: { host: string; port: number },
  probe: Probe,
  cls: ClsService,
  round: number,
): Promise<Run> {
  if (variant === 'plain') return plain(connection, probe, round);
  if (variant === 'cls') return plain(connection, probe, round, cls);
  if (variant === 'shaped') return plain(connection, probe, round, undefined, true);
  return tenantModule(connection, probe, round);
}

async function main() {
  const loadAtStart = load1();
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port };
  const probe: Probe = { redis: new IORedis(redis.port, '127.0.0.1') };
  const clsApp = await NestFactory.createApplicationContext(
    (() => {
      @Module({ imports: [ClsModule.forRoot({ global: true })] })
      class ClsOnly {}
      return ClsOnly;
    })(),
    { logger: false },
  );
  const cls = clsApp.get(ClsService);
  const runs: Record<Variant, Run[]> = { plain: [], cls: [], shaped: [], module: [] };
  try {
    await plain(connection, probe, -1); // warm-up
    await tenantModule(connection, probe, -1);
    const only = process.env.ONLY as Variant | undefined;
    if (only) {
      if (process.env.PROFILE) {
        const session = new Session();
        session.connect();
        await post(session, 'Profiler.enable');
        probe.profile = { session, dir: process.env.PROFILE };
      }
      const last = await runVariant(only, connection, probe, cls, 99);
      console.log(`${only} only`, JSON.stringify(last));
      return;
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order too, so no variant always runs right after the same one.
      const order = round % 2 ? [...VARIANTS].reverse() : VARIANTS;
      for (const variant of order) {
        runs[variant].push(await runVariant(variant, connection, probe, cls, round));
      }
      const line = Object.fromEntries(VARIANTS.map((v) => [v, runs[v][round]]));
      console.log(`round ${round + 1}/${ROUNDS}`, JSON.stringify(line));
    }
  } finally {
    probe.redis.disconnect();
    await clsApp.close();
    await redis.stop();
  }
  const loadAtEnd = load1();
  const med = (variant: Variant, field: keyof Run) => median(runs[variant].map((r) => r[field]));
  /** Median over rounds of the within-round ratio `variant / base`: paired, so steadier. */
  const paired = (variant: Variant, base: Variant, field: keyof Run = 'processPerSec') =>
    +median(runs[variant].map((r, i) => r[field] / runs[base][i][field])).toFixed(3);
  const byVariant = (field: keyof Run, digits = 0) =>
    Object.fromEntries(VARIANTS.map((v) => [v, +med(v, field).toFixed(digits)]));
  const summary = {
    jobs: JOBS,
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    loadAtStart,
    loadAtEnd,
    processPerSec: byVariant('processPerSec'),
    addPerSec: byVariant('addPerSec'),
    cpuMicrosPerJob: byVariant('cpuMicrosPerJob', 1),
    redisMicrosPerJob: byVariant('redisMicrosPerJob', 1),
    commandsPerJob: byVariant('commandsPerJob', 2),
    scriptCallsPerJob: byVariant('scriptCallsPerJob', 2),
  };
  const ratios = {
    processVsPlain: paired('module', 'plain'),
    processVsPlainWithCls: paired('module', 'cls'),
    processVsPlainModuleShaped: paired('module', 'shaped'),
    clsVsPlain: paired('cls', 'plain'),
    addVsPlain: paired('module', 'plain', 'addPerSec'),
    cpuPerJobVsPlain: paired('module', 'plain', 'cpuMicrosPerJob'),
    goal: 'processVsPlain >= 0.90',
  };
  const file = writeResult('context', { ...summary, ratios, runs });
  console.log(JSON.stringify({ ...summary, ratios }, null, 2));
  console.log(`written to ${file}`);
  const m = machine();
  const label: Record<Variant, string> = {
    plain: 'plain BullMQ',
    cls: 'BullMQ + `ClsService.run` per job',
    shaped: "plain BullMQ, jobs shaped like the module's (envelope, UUID ids, 3 attempts)",
    module: '**this module** (`TenantQueue.addBulk` + `@TenantProcessor`)',
  };
  const rows = VARIANTS.map((variant) => [
    label[variant],
    summary.processPerSec[variant],
    variant === 'plain' ? '1.00' : paired(variant, 'plain').toFixed(2),
    variant === 'plain' || variant === 'cls' ? '' : paired(variant, 'cls').toFixed(2),
    summary.cpuMicrosPerJob[variant],
    summary.redisMicrosPerJob[variant],
    summary.commandsPerJob[variant],
    summary.scriptCallsPerJob[variant],
    summary.addPerSec[variant],
  ]);
  const warning = loadWarning(loadAtStart, loadAtEnd);
  updateBenchmarksPage(
    'context',
    [
      table(
        [
          'variant',
          'processed jobs/s',
          'vs plain',
          'vs BullMQ + cls.run',
          'Node CPU µs/job',
          'Redis CPU µs/job',
          'Redis commands/job',
          'of which scripts',
          'added jobs/s',
        ],
        rows,
      ),
      '',
      `${JOBS} jobs, concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds (ratios: median of ` +
        `the within-round ratios), one private Redis; ${m.cpus} cores (${m.cpuModel}), Node ` +
        `${m.node}, load ${loadAtStart} at the start and ${loadAtEnd} at the end (the bench's own ` +
        `Redis and Node share the cores, and other work may: compare ratios within this table, ` +
        `not across runs). Redis figures are deltas over the processing phase: the server's CPU ` +
        `(\`INFO cpu\`) and its commands (\`INFO commandstats\`, those run inside Lua scripts ` +
        `included; "of which scripts": the EVALSHA calls). Goal: processing >= 0.90 of plain BullMQ.`,
      ...(warning ? ['', warning] : []),
    ].join('\n'),
  );
}

void main();
