/**
 * bench/context: no-op jobs through plain BullMQ, BullMQ + ClsService.run per job, and this
 * module (TenantQueue + @TenantProcessor), on one private Redis, in alternating rounds.
 *
 *   npm run bench:context            (JOBS=20000 CONCURRENCY=50 ROUNDS=3 by default)
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Queue, Worker } from 'bullmq';
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
import { machine, median, table, updateReadme, writeResult } from '../bench-utils';

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
  round: number,
  cls?: ClsService,
  shaped = false,
): Promise<Run> {
  const name = `${shaped ? 'shaped' : cls ? 'cls' : 'plain'}${round}`;
  const queue = new Queue(name, { connection, prefix: `{b:${name}}` });
  await queue.waitUntilReady();
  let t0 = performance.now();
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
  const finished = untilCompleted(worker, JOBS);
  t0 = performance.now();
  const cpu0 = cpuMicros();
  void worker.run();
  const processPerSec = JOBS / (((await finished) - t0) / 1000);
  const cpuMicrosPerJob = (cpuMicros() - cpu0) / JOBS;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return { addPerSec, processPerSec, cpuMicrosPerJob };
}

async function tenantModule(
  connection: { host: string; port: number },
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
  let t0 = performance.now();
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
  const finished = untilCompleted(worker, JOBS);
  t0 = performance.now();
  const cpu0 = cpuMicros();
  void worker.run();
  const processPerSec = JOBS / (((await finished) - t0) / 1000);
  const cpuMicrosPerJob = (cpuMicros() - cpu0) / JOBS;
  await queue.bullQueue.obliterate({ force: true });
  await app.close();
  return { addPerSec, processPerSec, cpuMicrosPerJob };
}

async function main() {
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port };
  const clsApp = await NestFactory.createApplicationContext(
    (() => {
      @Module({ imports: [ClsModule.forRoot({ global: true })] })
      class ClsOnly {}
      return ClsOnly;
    })(),
    { logger: false },
  );
  const cls = clsApp.get(ClsService);
  const runs: Record<'plain' | 'cls' | 'shaped' | 'module', Run[]> = {
    plain: [],
    cls: [],
    shaped: [],
    module: [],
  };
  try {
    await plain(connection, -1); // warm-up
    await tenantModule(connection, -1);
    if (process.env.ONLY === 'module') {
      const t = Date.now();
      const last = await tenantModule(connection, 99);
      console.log('module only', Date.now() - t, JSON.stringify(last));
      return;
    }
    for (let round = 0; round < ROUNDS; round++) {
      runs.plain.push(await plain(connection, round));
      runs.cls.push(await plain(connection, round, cls));
      runs.shaped.push(await plain(connection, round, undefined, true));
      runs.module.push(await tenantModule(connection, round));
      console.log(
        `round ${round + 1}/${ROUNDS}`,
        JSON.stringify({
          plain: runs.plain[round],
          cls: runs.cls[round],
          shaped: runs.shaped[round],
          module: runs.module[round],
        }),
      );
    }
  } finally {
    await clsApp.close();
    await redis.stop();
  }
  const rate = (variant: keyof typeof runs, field: keyof Run) =>
    Math.round(median(runs[variant].map((r) => r[field])));
  const summary = {
    jobs: JOBS,
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    processPerSec: {
      plain: rate('plain', 'processPerSec'),
      plainWithCls: rate('cls', 'processPerSec'),
      plainModuleShaped: rate('shaped', 'processPerSec'),
      module: rate('module', 'processPerSec'),
    },
    addPerSec: {
      plain: rate('plain', 'addPerSec'),
      plainWithCls: rate('cls', 'addPerSec'),
      plainModuleShaped: rate('shaped', 'addPerSec'),
      module: rate('module', 'addPerSec'),
    },
    cpuMicrosPerJob: {
      plain: rate('plain', 'cpuMicrosPerJob'),
      plainWithCls: rate('cls', 'cpuMicrosPerJob'),
      plainModuleShaped: rate('shaped', 'cpuMicrosPerJob'),
      module: rate('module', 'cpuMicrosPerJob'),
    },
  };
  const ratios = {
    processVsPlain: +(summary.processPerSec.module / summary.processPerSec.plain).toFixed(3),
    processVsPlainWithCls: +(
      summary.processPerSec.module / summary.processPerSec.plainWithCls
    ).toFixed(3),
    addVsPlain: +(summary.addPerSec.module / summary.addPerSec.plain).toFixed(3),
    processVsPlainModuleShaped: +(
      summary.processPerSec.module / summary.processPerSec.plainModuleShaped
    ).toFixed(3),
    cpuPerJobVsPlain: +(summary.cpuMicrosPerJob.module / summary.cpuMicrosPerJob.plain).toFixed(3),
    goal: 'processVsPlain >= 0.90',
  };
  const file = writeResult('context', { ...summary, ratios, runs });
  console.log(JSON.stringify({ ...summary, ratios }, null, 2));
  console.log(`written to ${file}`);
  const m = machine();
  const label: Record<keyof typeof runs, string> = {
    plain: 'plain BullMQ',
    cls: 'BullMQ + `ClsService.run` per job',
    shaped: "plain BullMQ, jobs shaped like the module's (envelope, UUID ids, 3 attempts)",
    module: '**this module** (`TenantQueue.addBulk` + `@TenantProcessor`)',
  };
  const key: Record<keyof typeof runs, keyof typeof summary.processPerSec> = {
    plain: 'plain',
    cls: 'plainWithCls',
    shaped: 'plainModuleShaped',
    module: 'module',
  };
  const rows = (Object.keys(label) as (keyof typeof runs)[]).map((variant) => {
    const k = key[variant];
    return [
      label[variant],
      summary.processPerSec[k],
      (summary.processPerSec[k] / summary.processPerSec.plain).toFixed(2),
      summary.cpuMicrosPerJob[k],
      summary.addPerSec[k],
      (summary.addPerSec[k] / summary.addPerSec.plain).toFixed(2),
    ];
  });
  updateReadme(
    'context',
    [
      table(
        ['variant', 'processed jobs/s', 'vs plain', 'Node CPU µs/job', 'added jobs/s', 'vs plain'],
        rows,
      ),
      '',
      `${JOBS} jobs, concurrency ${CONCURRENCY}, median of ${ROUNDS} alternating rounds, one private Redis; ` +
        `${m.cpus} cores (${m.cpuModel}), Node ${m.node}, load average ` +
        `${m.loadAverage.map((l: number) => l.toFixed(1)).join('/')} at the end (the bench's own ` +
        `Redis and Node share the cores, and other work may: compare ratios within this table, not ` +
        `across runs). Goal: processing >= 0.90 of plain BullMQ.`,
    ].join('\n'),
  );
}

void main();
