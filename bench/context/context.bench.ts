/**
 * bench/context: no-op jobs through plain BullMQ, BullMQ + ClsService.run per job, and this
 * module (TenantQueue + @TenantProcessor), on one private Redis, in alternating rounds.
 *
 *   npm run bench:context            (JOBS=20000 CONCURRENCY=50 ROUNDS=3 by default)
 */
import 'reflect-metadata';
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
}

function untilCompleted(worker: Worker, total: number): Promise<number> {
  return new Promise((resolve) => {
    let done = 0;
    worker.on('completed', () => {
      if (++done === total) resolve(performance.now());
    });
  });
}

async function plain(
  connection: { host: string; port: number },
  round: number,
  cls?: ClsService,
): Promise<Run> {
  const name = `${cls ? 'cls' : 'plain'}${round}`;
  const queue = new Queue(name, { connection, prefix: `{b:${name}}` });
  await queue.waitUntilReady();
  let t0 = performance.now();
  for (let i = 0; i < JOBS; i += CHUNK) {
    await queue.addBulk(
      Array.from({ length: Math.min(CHUNK, JOBS - i) }, (_, k) => ({
        name: 'noop',
        data: { n: i + k, tenant: `tenant-${(i + k) % TENANTS}` },
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
  void worker.run();
  const processPerSec = JOBS / (((await finished) - t0) / 1000);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return { addPerSec, processPerSec };
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
  void worker.run();
  const processPerSec = JOBS / (((await finished) - t0) / 1000);
  await queue.bullQueue.obliterate({ force: true });
  await app.close();
  return { addPerSec, processPerSec };
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
  const runs: Record<'plain' | 'cls' | 'module', Run[]> = { plain: [], cls: [], module: [] };
  try {
    await plain(connection, -1); // warm-up
    await tenantModule(connection, -1);
    if (process.env.ONLY === 'module') {
      const t = Date.now();
      await tenantModule(connection, 99);
      console.log('module only', Date.now() - t);
      return;
    }
    for (let round = 0; round < ROUNDS; round++) {
      runs.plain.push(await plain(connection, round));
      runs.cls.push(await plain(connection, round, cls));
      runs.module.push(await tenantModule(connection, round));
      console.log(
        `round ${round + 1}/${ROUNDS}`,
        JSON.stringify({
          plain: runs.plain[round],
          cls: runs.cls[round],
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
      module: rate('module', 'processPerSec'),
    },
    addPerSec: {
      plain: rate('plain', 'addPerSec'),
      plainWithCls: rate('cls', 'addPerSec'),
      module: rate('module', 'addPerSec'),
    },
  };
  const ratios = {
    processVsPlain: +(summary.processPerSec.module / summary.processPerSec.plain).toFixed(3),
    processVsPlainWithCls: +(
      summary.processPerSec.module / summary.processPerSec.plainWithCls
    ).toFixed(3),
    addVsPlain: +(summary.addPerSec.module / summary.addPerSec.plain).toFixed(3),
    goal: 'processVsPlain >= 0.90',
  };
  const file = writeResult('context', { ...summary, ratios, runs });
  console.log(JSON.stringify({ ...summary, ratios }, null, 2));
  console.log(`written to ${file}`);
  const m = machine();
  updateReadme(
    'context',
    [
      table(
        ['variant', 'processed jobs/s', 'vs plain BullMQ', 'added jobs/s', 'vs plain BullMQ'],
        [
          ['plain BullMQ', summary.processPerSec.plain, '1.00', summary.addPerSec.plain, '1.00'],
          [
            'BullMQ + `ClsService.run` per job',
            summary.processPerSec.plainWithCls,
            (summary.processPerSec.plainWithCls / summary.processPerSec.plain).toFixed(2),
            summary.addPerSec.plainWithCls,
            (summary.addPerSec.plainWithCls / summary.addPerSec.plain).toFixed(2),
          ],
          [
            'this module',
            summary.processPerSec.module,
            ratios.processVsPlain.toFixed(2),
            summary.addPerSec.module,
            ratios.addVsPlain.toFixed(2),
          ],
        ],
      ),
      '',
      `${JOBS} jobs, concurrency ${CONCURRENCY}, median of ${ROUNDS} alternating rounds; ${m.cpus} cores (${m.cpuModel}), ` +
        `Node ${m.node}, load average ${m.loadAverage.map((l: number) => l.toFixed(1)).join('/')} at the end. ` +
        `Processing vs BullMQ + CLS: ${ratios.processVsPlainWithCls.toFixed(2)}. Goal: processing >= 0.90 of plain BullMQ.`,
    ].join('\n'),
  );
}

void main();
