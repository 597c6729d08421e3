import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { TenantQueueRedis, settlesWithin } from '../redis/tenant-queue.redis';
import { Messages } from '../../tenant-queue.messages';
import type { Worker } from 'bullmq';
import { tenantLogFields } from '../context/tenant-log-fields';
import { TenantQueueLogger } from '../logging/tenant-queue-logger';
import { TenantQueueRegistry } from '../queues/tenant-queue.registry';
import { TenantQueueDefinition } from '../types/queue-definition.interface';
import { TenantJobPipeline, WorkerEvents } from './tenant-job-pipeline';
import { TenantJobRunner } from './tenant-job.runner';
import { TenantProcessorOptions } from './tenant-processor.decorator';
import { TenantWorkerHost } from './tenant-worker-host';
import { outsideTenantContext } from '../context/outside-tenant-context';
import { UNSTORABLE_RESULT_ERRORS } from './tenant-bull-job';
import { StartedConsumer, TENANT_WORKER_BACKEND, TenantWorkerBackend } from './worker-backend';
import {
  isOutOfMemoryReply,
  isPermissionReply,
  isRedisConnectionError,
} from '../redis/connection-errors';
import { dropWorker } from '../bullmq';

/** BullMQ's default `lockDuration`. */
const DEFAULT_LOCK_MS = 30_000;
/** A worker's errors of a Redis out of memory are logged at most once per this interval. */
const FULL_LOG_INTERVAL_MS = 60_000;

/**
 * BullMQ's error when a job's hash is gone as the worker finishes it (`ErrorCode.JobNotExist`):
 * the job was removed while it ran (`Queue.obliterate({ force: true })`, `job.remove()`). BullMQ
 * then tries to record that as a failure, and fails the same way: two errors per job.
 */
const JOB_GONE = /^Missing key for job (.+)\. (\w+)$/;
/**
 * BullMQ's errors for a job whose lock expired unrenewed (Redis paused, stalled or away for
 * `lockDuration`, or this process's event loop blocked that long): its lock renewal fails, then
 * the finish and the failure it records (`ErrorCode.JobLockNotExist`, or `JobLockMismatch` once
 * another worker took the job again): up to three errors per job, each without its tenant.
 */
const LOCK_LOST =
  /^(?:could not renew lock for job (.+)|Missing lock for job (.+)\. \w+|Lock mismatch for job (.+)\. Cmd \w+ from \w+)$/;
/** Job ids already reported gone or unlocked (their later errors are not logged); bounded. */
const GONE_KEPT = 1000;

/**
 * The one place that starts, keeps and closes the module's BullMQ workers (for
 * `@TenantProcessor`s, `@TenantCron` fan-out, adopted `@nestjs/bullmq` processors). Each worker
 * gets the features' worker plugins; `TenantQueueRegistry.getWorker` reads them from here.
 */
@Injectable()
export class TenantWorkerLauncher implements BeforeApplicationShutdown {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  private readonly workers = new Map<string, Worker>();
  /** Workers paused because Redis refuses their commands (`NOPERM`): down until a restart. */
  private readonly refused = new WeakSet<Worker>();
  /** Every worker and queue events to close (`workers` keeps the first worker per queue). */
  private readonly closables = new Map<Closable, { name: string; close: () => Promise<void> }>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly runner: TenantJobRunner,
    private readonly pipeline: TenantJobPipeline,
    @Inject(TENANT_WORKER_BACKEND) private readonly backend: TenantWorkerBackend,
    registry: TenantQueueRegistry,
    private readonly redis: TenantQueueRedis,
  ) {
    registry.useWorkerLookup(
      (name) => this.workers.get(name),
      (worker) => this.refused.has(worker),
    );
  }

  /** Starts the consumer of `definition` (a queue or one pool) that runs `host`'s jobs. */
  launch(
    host: TenantWorkerHost,
    definition: TenantQueueDefinition,
    options: TenantProcessorOptions,
  ): StartedConsumer {
    const started = this.backend.start(
      definition,
      this.runner.createProcessor(host, definition, options),
      options,
    );
    const worker = started.worker;
    if (worker) {
      this.keep(worker, definition, options);
      host.attachWorker(worker);
    } else {
      // The testing module's inline consumer emits BullMQ's worker events, with BullMQ's arguments.
      const events = started.events as WorkerEvents;
      for (const plugin of this.pipeline.workerPlugins) plugin.attach(events, definition, options);
    }
    return started;
  }

  /** Takes in a worker started elsewhere (an adopted `@nestjs/bullmq` processor's). */
  adopt(worker: Worker, definition: TenantQueueDefinition, options: TenantProcessorOptions): void {
    // As for the module's own workers (`TenantWorker.run`): BullMQ's resume() calls run() in the
    // caller's context, and the main loop it starts is the context of every worker event.
    const run = worker.run.bind(worker);
    worker.run = () => outsideTenantContext(run);
    this.keep(worker, definition, options, true);
  }

  /** Closes `events` (an adopted `@nestjs/bullmq` `@QueueEventsListener`'s) with the workers. */
  adoptQueueEvents(events: Closable, queue: string): void {
    this.track(`queue events ${queue}`, events, true);
  }

  /** The worker consuming a queue or pool in this process, if any. */
  get(name: string): Worker | undefined {
    return this.workers.get(name);
  }

  /**
   * Closes every worker once (active jobs finish first). Features that must outlive the workers'
   * last completions (fair gates, metrics) await this before their own teardown.
   */
  close(): Promise<void> {
    this.closing ??= this.closeWithin();
    return this.closing;
  }

  /** Closes the workers within the shutdown bound; past it, drops their connections. */
  private async closeWithin(): Promise<void> {
    const closing = [...this.closables];
    const closed = Promise.all(
      closing.map(([, { name, close }]) =>
        close().catch((error: Error) =>
          this.logger.warn(`${tenantLogFields()} ${name} did not close: ${error?.message}`),
        ),
      ),
    );
    const budget = this.redis.shutdownMsLeft();
    // The forced disconnect's wait comes out of the bound too (it once came on top: 4 s of 3).
    const dropMs = Math.min(1000, Math.floor(budget / 5));
    if (await settlesWithin(closed, budget - dropMs)) return;
    this.logger.warn(
      `${tenantLogFields()} ${Messages.shutdownTimedOut(`Closing the workers`, this.redis.shutdownTimeoutMs)}`,
    );
    // A worker that never connected waits for its connection even to disconnect: not awaited.
    await settlesWithin(Promise.all(closing.map(([target]) => dropWorker(target))), dropMs);
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.close();
  }

  private keep(
    worker: Worker,
    definition: TenantQueueDefinition,
    options: TenantProcessorOptions,
    adopted = false,
  ) {
    // Connection errors once per outage (a worker retries every second or so while Redis is
    // away, at boot too), the others each time. Without a listener BullMQ prints each one.
    const outage = this.redis.outageLog(`worker ${definition.name}`);
    // Redis at maxmemory refuses every fetch and finish alike, hundreds a second: one line a
    // minute, with how many were not logged.
    let fullLoggedAt = -Infinity;
    let fullUnlogged = 0;
    const reported = new Set<string>();
    /** Whether `jobId` was logged already; records it otherwise. */
    const seen = (jobId: string) => {
      if (reported.has(jobId)) return true;
      if (reported.size >= GONE_KEPT) reported.clear();
      reported.add(jobId);
      return false;
    };
    worker.on('error', (error) => {
      if (isRedisConnectionError(error)) return outage.error(error);
      const removed = JOB_GONE.exec(error?.message ?? '');
      if (removed) {
        if (seen(removed[1])) return;
        return this.logger.warn(
          `${tenantLogFields({ jobId: removed[1] })} ${Messages.workerJobRemoved(definition.name, removed[1], removed[2])}`,
        );
      }
      const unlocked = LOCK_LOST.exec(error?.message ?? '');
      if (unlocked) {
        const jobId = unlocked[1] ?? unlocked[2] ?? unlocked[3];
        if (seen(jobId)) return;
        return this.logger.warn(
          `${tenantLogFields({ jobId })} ${Messages.workerJobLockLost(definition.name, jobId, worker.opts.lockDuration ?? DEFAULT_LOCK_MS)}`,
        );
      }
      if (isPermissionReply(error)) {
        // Refused at once on every fetch, with no wait in between (BullMQ's worker retries a
        // refused fetch at once): the loop took the event loop, thousands of errors a second.
        // Paused, not closed: under bullmq 5 a close while its connection's first INFO is
        // refused leaves that connection's 'error' without a listener, and the process exits.
        if (worker.isPaused() || worker.closing) return;
        this.refused.add(worker);
        this.logger.error(
          `${tenantLogFields()} ${Messages.workerRedisNoPermission(definition.name, error.message)}`,
        );
        void worker.pause(true).catch(() => undefined);
        return;
      }
      if (isOutOfMemoryReply(error)) {
        const now = Date.now();
        if (now - fullLoggedAt < FULL_LOG_INTERVAL_MS) {
          fullUnlogged++;
          return;
        }
        this.logger.error(
          `${tenantLogFields()} ${Messages.workerRedisFull(definition.name, error.message, fullUnlogged, FULL_LOG_INTERVAL_MS)}`,
        );
        fullLoggedAt = now;
        fullUnlogged = 0;
        return;
      }
      const log = () =>
        this.logger.error(`${tenantLogFields()} worker ${definition.name}: ${error.message}`);
      // BullMQ emits a result JSON cannot hold (a TypeError from its JSON.stringify) before it
      // fails the job with it; the job's class marks it then, a few microtasks later.
      if (!(error instanceof TypeError)) return log();
      setImmediate(() => UNSTORABLE_RESULT_ERRORS.has(error) || log());
    });
    // Back: its first connection, or a fetch that found the queue empty.
    worker.on('ready', () => outage.ready());
    worker.on('drained', () => outage.ready());
    for (const plugin of this.pipeline.workerPlugins) plugin.attach(worker, definition, options);
    if (!this.workers.has(definition.name)) this.workers.set(definition.name, worker);
    this.track(`worker ${definition.name}`, worker, adopted);
  }

  /**
   * Closes `target` at shutdown, within the bound. One built by `@nestjs/bullmq` (`adopted`) is
   * closed by it again in its own shutdown hook, with no bound: a close past the bound never
   * settles while Redis is away (its last commands wait for a connection that was dropped), and
   * the app would never exit. Once this launcher is closing, that call gets its outcome.
   */
  private track(name: string, target: Closable, adopted: boolean): void {
    if (this.closables.has(target)) return;
    const close = target.close.bind(target);
    this.closables.set(target, { name, close });
    if (adopted) target.close = () => this.closing ?? close();
  }
}

/** What the launcher closes: a worker, or an adopted `QueueEvents`. */
export interface Closable {
  close(): Promise<void>;
  disconnect(): Promise<void>;
}
