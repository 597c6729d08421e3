import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { Job, Queue, Worker } from 'bullmq';
import { ClsModule } from 'nestjs-cls';
import {
  TenantContext,
  TenantFairnessOptions,
  TenantQueueMetricsOptions,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../lib';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { redisPerJob, redisWork } from '../bench-utils';

export interface BenchJob {
  t0: number;
  tenant: string;
  /** The scenario's key of the job (a tenant, or a fair key inside one), for order checks. */
  key?: string;
  /** The job's place in its scenario's enqueue order (each must run exactly once). */
  seq?: number;
  /** Filler, to give a job a payload of a chosen size. */
  pad?: string;
}

/** One job of `Side.addJobs`: its data, and the options a scenario sets per job. */
export interface BenchJobSpec {
  data: BenchJob;
  /** The module's `fairKey` job option (ignored by plain BullMQ). */
  fairKey?: string;
  /** BullMQ's `priority` job option (plain BullMQ sides only). */
  priority?: number;
}

/** What every bench job does; set by each scenario before its workers run. */
export const work = { handle: (_data: BenchJob): void | Promise<void> => undefined };

export function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

export interface Side {
  label: string;
  /** Enqueues `count` jobs of one tenant, in bulk. */
  enqueue(tenant: string, count: number): Promise<void>;
  /** Enqueues these jobs of one tenant in one `addBulk` call. */
  addJobs(tenant: string, jobs: BenchJobSpec[]): Promise<void>;
  /** Starts consuming (workers are created paused). */
  run(): void;
  close(): Promise<void>;
}

const chunks = (count: number, size: number) =>
  Array.from({ length: Math.ceil(count / size) }, (_, i) => Math.min(size, count - i * size));

/** `count` jobs of one tenant in calls of at most `size`, all of a call stamped at its start. */
async function enqueueChunked(
  side: Pick<Side, 'addJobs'>,
  tenant: string,
  count: number,
  size: number,
): Promise<void> {
  for (const n of chunks(count, size)) {
    const t0 = Date.now();
    await side.addJobs(
      tenant,
      Array.from({ length: n }, () => ({ data: { t0, tenant } })),
    );
  }
}

/**
 * Plain BullMQ: one queue, one worker, FIFO. `byTurn`: each job added with BullMQ's own priority,
 * its place among its tenant's jobs (1, 2, 3...): turns by hand, the order and the price of
 * BullMQ's prioritized set without this module.
 */
export async function plainSide(
  connection: object,
  concurrency: number,
  byTurn = false,
): Promise<Side> {
  const name = `plain${Math.random().toString(36).slice(2, 8)}`;
  const queue = new Queue(name, { connection });
  const worker = new Worker(name, async (job: Job<BenchJob>) => work.handle(job.data), {
    connection,
    concurrency,
    autorun: false,
    removeOnComplete: { count: 0 },
  });
  await worker.waitUntilReady();
  const turns = new Map<string, number>();
  const side: Side = {
    label: byTurn ? 'plain BullMQ, priority = turn in tenant' : 'plain BullMQ',
    enqueue: (tenant, count) => enqueueChunked(side, tenant, count, 1000),
    async addJobs(tenant, jobs) {
      let turn = turns.get(tenant) ?? 0;
      await queue.addBulk(
        jobs.map((job) => {
          const priority = byTurn ? ++turn : job.priority;
          return { name: 'w', data: job.data, opts: priority ? { priority } : undefined };
        }),
      );
      turns.set(tenant, turn);
    },
    run: () => void worker.run(),
    async close() {
      await worker.close(true);
      await queue.close();
    },
  };
  return side;
}

/** What else a module side's queue uses: a budget group, fair keys on its jobs. */
export interface ModuleSideExtra {
  budget?: string;
  /** Jobs of a tenant spread over this many fair keys (the queue needs `fairness.fairKey`). */
  fairKeys?: number;
  /** The module's metrics options (default: the module's own). */
  metrics?: TenantQueueMetricsOptions;
  /** `'process'`: the jobs are added by a producer in its own process (producer-process.ts). */
  producer?: 'process';
}

/** This module, with or without fairness: producer and consumer in one Nest app. */
export async function moduleSide(
  connection: object,
  concurrency: number,
  fairness: TenantFairnessOptions | false,
  extra: ModuleSideExtra = {},
): Promise<Side> {
  const prefix = `b${Math.random().toString(36).slice(2, 8)}`;
  @TenantProcessor('bench', { concurrency, autorun: false, removeOnComplete: { count: 0 } })
  class BenchProcessor extends TenantWorkerHost {
    async process(job: TenantJob<BenchJob>) {
      return work.handle(job.data);
    }
  }

  @Module({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({
        connection,
        prefix,
        ...(extra.metrics ? { metrics: extra.metrics } : {}),
      }),
      TenantQueueModule.registerQueue({
        name: 'bench',
        fairness: fairness || undefined,
        ...(extra.budget ? { budget: extra.budget } : {}),
      }),
    ],
    providers: [BenchProcessor],
  })
  class BenchModule {}

  const producer =
    extra.producer === 'process' ? await forkProducer(connection, prefix, fairness) : undefined;
  const app: INestApplicationContext = await NestFactory.createApplicationContext(BenchModule, {
    logger: ['error', 'warn'],
  });
  const registry = app.get(TenantQueueRegistry);
  const queue = registry.getQueue<BenchJob>('bench');
  const context = app.get(TenantContext);
  const side: Side = {
    label:
      (fairness ? `module, fairness on ${JSON.stringify(fairness)}` : 'module, fairness off') +
      (extra.budget ? `, budget ${extra.budget}` : '') +
      (extra.fairKeys ? `, ${extra.fairKeys} fair keys per tenant` : '') +
      (producer ? ', producer in its own process' : ''),
    async enqueue(tenant, count) {
      if (!extra.fairKeys) return enqueueChunked(side, tenant, count, 2000);
      for (const size of chunks(count, 2000)) {
        const t0 = Date.now();
        await side.addJobs(
          tenant,
          Array.from({ length: size }, (_, i) => ({
            data: { t0, tenant },
            fairKey: `u${i % extra.fairKeys!}`,
          })),
        );
      }
    },
    async addJobs(tenant, jobs) {
      if (producer) return producer.add(tenant, jobs);
      await context.run(tenant, () =>
        queue.addBulk(
          jobs.map((job) => ({
            name: 'w',
            data: job.data,
            opts: job.fairKey ? { fairKey: job.fairKey } : undefined,
          })),
        ),
      );
    },
    run: () => void registry.getWorker('bench')!.run(),
    async close() {
      await producer?.close();
      await app.close();
    },
  };
  return side;
}

interface ProducerReply {
  ok?: boolean;
  ready?: boolean;
  error?: string;
}

/** A producer in its own process (producer-process.ts) on the same queue, ready to add. */
async function forkProducer(
  connection: object,
  prefix: string,
  fairness: TenantFairnessOptions | false,
): Promise<{ add(tenant: string, jobs: BenchJobSpec[]): Promise<void>; close(): Promise<void> }> {
  const child = fork(join(__dirname, 'producer-process.ts'), [], {
    execArgv: ['-r', 'ts-node/register/transpile-only'],
    env: {
      ...process.env,
      TQ_BENCH_CONNECTION: JSON.stringify(connection),
      TQ_BENCH_PREFIX: prefix,
      TQ_BENCH_FAIRNESS: JSON.stringify(fairness),
    },
  });
  // Replies come in order, one per message sent (and one when ready).
  const pending: { resolve(reply: ProducerReply): void; reject(error: Error): void }[] = [];
  const reply = () =>
    new Promise<ProducerReply>((resolve, reject) => pending.push({ resolve, reject }));
  child.on('message', (message: ProducerReply) => pending.shift()?.resolve(message));
  child.once('exit', (code) => {
    for (const waiter of pending.splice(0)) {
      waiter.reject(new Error(`the bench's producer exited (${code})`));
    }
  });
  await reply();
  return {
    async add(tenant, jobs) {
      const answer = reply();
      child.send({ tenant, jobs });
      const { ok, error } = await answer;
      if (!ok) throw new Error(`the bench's producer failed: ${error}`);
    },
    async close() {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await gone;
    },
  };
}

/** Resolves when `predicate` holds (polled every 2 ms), or rejects after `timeoutMs`. */
export function until(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const poll = () => {
      if (predicate()) return resolve();
      if (Date.now() > deadline) return reject(new Error('bench timed out'));
      setTimeout(poll, 2);
    };
    poll();
  });
}

/**
 * No-op jobs end to end (enqueue while consuming, concurrency 50), spread over `tenants`; with
 * `redis`, the Redis cost of the run too (INFO deltas).
 */
export async function throughput(
  side: Side,
  tenants: number,
  jobs: number,
  redis?: { info(section: string): Promise<string> },
  drain = false,
) {
  let done = 0;
  work.handle = () => {
    done++;
  };
  // `drain`: a backlog, every job enqueued before the workers start; only the drain is timed.
  if (drain) for (let t = 0; t < tenants; t++) await side.enqueue(`t${t}`, jobs / tenants);
  const before = redis ? await redisWork(redis) : undefined;
  const start = performance.now();
  const cpu = process.cpuUsage();
  side.run();
  if (!drain) for (let t = 0; t < tenants; t++) await side.enqueue(`t${t}`, jobs / tenants);
  await until(() => done === jobs, 300_000);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const after = redis ? await redisWork(redis) : undefined;
  await side.close();
  const cpuMicrosPerJob = Math.round((used.user + used.system) / jobs);
  return {
    side: side.label,
    tenants,
    jobs,
    jobsPerSecond: Math.round(jobs / seconds),
    cpuMicrosPerJob,
    ...(before && after ? redisPerJob(before, after, jobs) : {}),
  };
}
