import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { TenantBacklogFullError } from '../errors';
import { TenantQueueDefinition } from '../interfaces/register-queue-options.interface';
import {
  JobDispatcher,
  PreparedJob,
  TenantJobOptions,
  directDispatcher,
} from '../producer/job-dispatcher.interface';
import { Messages } from '../tenant-queue.messages';
import type { RedisClient } from '../tenant-queue.redis';
import { FairCommands } from './fair-gate.script';
import { ResolvedFairnessOptions, encodeRate } from './fairness-options';
import { assertLane } from './lanes';
import { SlowLaneEvent } from './slow-lane-event.interface';

/** Final outcome of a job: completed, failed for good, or cancelled (not a tenant failure). */
export type FairOutcome = 'c' | 'f' | 'x';

/**
 * Directory/tier hints per tenant: [weight, cap, rate ("T:tol:..." or "none"), lane weights
 * (JSON)], `false` where neither says anything.
 */
export type FairHint = [number | false, number | false, string | false, string | false];
export type FairHints = Record<string, FairHint>;

/** Bucket of jobs enqueued without a tenant (system jobs on a fair queue). */
export const SYSTEM_TENANT = '_system';

const ENQUEUE_CHUNK = 2000;

export interface FairGateDeps {
  commands: () => FairCommands;
  bullQueue: () => Queue;
  hints: (tenants: string[]) => Promise<FairHints>;
  onSlowLane: (event: SlowLaneEvent) => void;
  logger: Logger;
}

/**
 * The fair gate of one queue. Jobs wait in per-tenant backlogs in Redis; every script call
 * (enqueue, release, tick, admin) ends by admitting the next jobs in fair order, which this
 * process then hands to BullMQ under their own job ids. No turn state lives in memory here.
 */
export class FairGate implements JobDispatcher {
  readonly base: string;
  private readonly config: string;
  private readonly slowConfig: string;
  private readonly jobPrefix: string;
  private readonly consumerId = randomUUID();
  private concurrency = 0;
  private timer: NodeJS.Timeout | undefined;
  private pending: string[] = [];
  private flushing: Promise<void> | undefined;
  private ticking: Promise<void> | undefined;
  private readonly sends = new Set<Promise<void>>();
  private closed = false;
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  private readonly laneIndex = new Map<string, number>();
  private readonly laneOfJob = new Map<string, string>();

  constructor(
    readonly definition: TenantQueueDefinition,
    readonly options: ResolvedFairnessOptions,
    private readonly deps: FairGateDeps,
  ) {
    this.base = `${definition.bullPrefix}:~fair`;
    this.jobPrefix = `${definition.bullPrefix}:${definition.name}:`;
    this.config = JSON.stringify({
      dw: options.defaultWeight,
      dcap: options.defaultConcurrency,
      k: options.maxConsecutive,
      win: options.window,
      minWin: options.minWindow,
      lease: options.leaseMs,
      slowShare: options.slowLane.share,
      ...(options.rateLimit ? { rl: encodeRate(options.rateLimit) } : {}),
      ...(options.lanes.length
        ? { lanes: options.lanes.map((l) => l.name), shares: laneShares(options.lanes) }
        : {}),
    });
    for (const [index, lane] of options.lanes.entries()) {
      this.laneIndex.set(lane.name, index);
      for (const job of lane.jobs) this.laneOfJob.set(job, lane.name);
    }
    const slow = options.slowLane;
    this.slowConfig = JSON.stringify({
      threshold: slow.failureThreshold,
      window: slow.windowMs,
      recoverAt: slow.recoverAt,
    });
  }

  private commands: FairCommands | undefined;

  /** Taken once: after shutdown a call fails instead of opening a new connection. */
  private get redis(): FairCommands {
    this.commands ??= this.deps.commands();
    return this.commands;
  }

  /** Enqueue path of the queue: into the tenants' backlogs, then whatever the window admits. */
  async dispatch(queue: Queue, jobs: PreparedJob[]): Promise<void> {
    // A delayed job would hold a slot while it waits: it goes to BullMQ directly.
    const delayed = jobs.filter((job) => (job.opts.delay ?? 0) > 0);
    const gated = delayed.length ? jobs.filter((job) => !((job.opts.delay ?? 0) > 0)) : jobs;
    const laned = gated.map((job) => this.laneOf(job));
    const tenants = [...new Set(gated.map((job) => job.tenantId ?? SYSTEM_TENANT))];
    const hints = JSON.stringify(await this.deps.hints(tenants));
    for (let start = 0; start < gated.length; start += ENQUEUE_CHUNK) {
      const args: string[] = [];
      for (let i = start; i < Math.min(gated.length, start + ENQUEUE_CHUNK); i++) {
        const job = gated[i];
        const [lane, opts] = laned[i];
        const json = JSON.stringify({ n: job.name, d: job.data, o: opts });
        args.push(job.opts.jobId, job.tenantId ?? SYSTEM_TENANT, lane, json);
      }
      const [status, second, third] = await this.redis.tqFairEnqueue(
        this.base,
        this.config,
        this.options.dispatchBatch,
        this.options.maxBacklog,
        hints,
        ...args,
      );
      if (status === 'full') {
        const tenant = second as string;
        const backlog = Number(third);
        const limit = this.options.maxBacklog;
        throw new TenantBacklogFullError(
          this.definition.name,
          tenant,
          backlog,
          Messages.tenantBacklogFull(this.definition.name, tenant, backlog, limit),
        );
      }
      this.wakeIn(Number(third));
      await this.send(second as string[]);
    }
    if (delayed.length) {
      await directDispatcher.dispatch(
        queue,
        delayed.map((job) => {
          const opts = this.laneOf(job)[1] as PreparedJob['opts'];
          return { ...job, opts: this.laneIndex.size > 1 ? { ...opts, priority: 2 } : opts };
        }),
      );
    }
  }

  /**
   * The job's lane (its `lane` option, else its name's lane, else the default) and its options
   * for BullMQ without `lane`. The gate gives admitted jobs their BullMQ priority (see dispatch in
   * fair-common.lua); a delayed job, which skips the gate, runs as work beyond its lane's share.
   */
  private laneOf(job: PreparedJob): [string, object] {
    const asked = (job.opts as TenantJobOptions).lane;
    // TenantQueue checked the lane already; this guard keeps any other caller from parking a job
    // in a lane no dispatch serves.
    if (asked !== undefined && !this.laneIndex.has(asked)) assertLane(this.definition, asked);
    if (!this.laneIndex.size) return ['', job.opts];
    const { lane: _lane, ...opts } = job.opts as TenantJobOptions;
    return [asked ?? this.laneOfJob.get(job.name) ?? this.options.defaultLane, opts];
  }

  /**
   * Wakes this process when the next rate-limited tenant may start, so limited tenants resume
   * on time without polling Redis in between (the regular tick covers anything later).
   */
  private wakeIn(ms: number): void {
    if (!(ms >= 0) || this.closed || ms >= this.options.tickMs) return;
    const at = Date.now() + ms;
    if (this.wakeTimer && at >= this.wakeAt) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = undefined;
        this.wakeAt = Infinity;
        // A tick already running may have read Redis before the wake time: run one after it.
        void (this.ticking ?? Promise.resolve()).then(() => this.tick());
      },
      Math.max(1, ms),
    );
    this.wakeTimer.unref();
  }

  /** Up to `count` tenants waiting in this gate (in turn, or held by their rate limit), sampled. */
  async waitingTenants(count: number): Promise<string[]> {
    const client = this.redis as unknown as RedisClient;
    const ready = this.options.lanes.length
      ? this.options.lanes.map((lane) => `${this.base}:ready:${lane.name}`)
      : [`${this.base}:ready`];
    const found = await Promise.all(
      [...ready, `${this.base}:limited`].map((key) => client.zrandmember(key, count)),
    );
    return [...new Set(found.flat())].slice(0, count);
  }

  /** A job reached its final outcome: free its slot (batched) and admit the next jobs. */
  release(jobId: string, outcome: FairOutcome): void {
    // After close the lease reaper of a live process frees the slot.
    if (this.closed) return;
    this.pending.push(jobId, outcome);
    this.flushing ??= this.flush();
  }

  /** A local worker consumes this queue; its concurrency sizes the shared window. */
  addConsumer(concurrency: number): void {
    this.concurrency += Math.max(1, concurrency);
    void this.tick();
  }

  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.tick(), this.options.tickMs);
    this.timer.unref();
    void this.tick();
  }

  /** Runs the upkeep script now (also on a timer): reaps leases, re-sends, dispatches. */
  tick(leaving = false): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.ticking) return this.ticking;
    const run = async () => {
      try {
        const ttl = this.options.tickMs * 3 + 2000;
        const [events, jobs, wake] = await this.redis.tqFairTick(
          this.base,
          this.config,
          this.options.dispatchBatch,
          this.slowConfig,
          this.jobPrefix,
          this.options.resendAfterMs,
          this.consumerId,
          leaving ? -1 : this.concurrency,
          ttl,
          this.options.windowPerSlot,
        );
        this.emit(events);
        this.wakeIn(Number(wake));
        await this.send(jobs);
      } catch (error) {
        if (!this.closed) this.deps.logger.warn(`fair tick ${this.definition.name}: ${error}`);
      } finally {
        this.ticking = undefined;
      }
    };
    this.ticking = run();
    return this.ticking;
  }

  /** Runs an admin operation (weight, cap, pause, resume) and sends what it admits. */
  async admin(tenantId: string, op: string, value = ''): Promise<unknown[]> {
    const reply = await this.redis.tqFairAdmin(
      this.base,
      this.config,
      this.options.dispatchBatch,
      tenantId,
      op,
      value,
    );
    if (op !== 'get') {
      this.wakeIn(Number(reply[2]));
      await this.send((reply as [unknown, string[]])[1]);
    }
    return reply;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.timer = undefined;
    this.wakeTimer = undefined;
    await this.flushing;
    await this.ticking;
    if (this.concurrency > 0) await this.tick(true);
    this.closed = true;
    await Promise.all([...this.sends]);
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, 1000);
      try {
        const [events, jobs, wake] = await this.redis.tqFairRelease(
          this.base,
          this.config,
          this.options.dispatchBatch,
          this.slowConfig,
          ...batch,
        );
        this.emit(events);
        this.wakeIn(Number(wake));
        void this.send(jobs);
      } catch (error) {
        // The leases of this batch expire and the reaper frees them.
        this.deps.logger.warn(`fair release ${this.definition.name}: ${error}`);
      }
    }
    this.flushing = undefined;
  }

  /** Hands admitted jobs to BullMQ without waiting for earlier sends; acks clear in-transit. */
  private send(flat: string[]): Promise<void> {
    if (!flat || flat.length === 0) return Promise.resolve();
    const ids: string[] = [];
    const jobs = [];
    for (let i = 0; i < flat.length; i += 3) {
      const job = JSON.parse(flat[i + 1]) as { n: string; d: object; o: object };
      const priority = Number(flat[i + 2]);
      ids.push(flat[i]);
      const opts =
        priority > 0 ? { ...job.o, priority, jobId: flat[i] } : { ...job.o, jobId: flat[i] };
      jobs.push({ name: job.n, data: job.d, opts });
    }
    const sent: Promise<void> = this.deps
      .bullQueue()
      .addBulk(jobs)
      .then(() => this.redis.tqFairAck(this.base, this.config, ...ids))
      .then(
        () => undefined,
        (error) => {
          // Left in transit: the tick re-sends it under the same job id.
          this.deps.logger.warn(`fair send ${this.definition.name}: ${error}`);
        },
      )
      .finally(() => this.sends.delete(sent));
    this.sends.add(sent);
    return sent;
  }

  private emit(events: (string | number)[]): void {
    for (let i = 0; i + 2 < events.length; i += 3) {
      const event: SlowLaneEvent = {
        queue: this.definition.name,
        tenantId: String(events[i + 1]),
        failures: Number(events[i + 2]),
        state: events[i] === 'enter' ? 'entered' : 'left',
      };
      const log =
        event.state === 'entered'
          ? Messages.slowLaneEnter(event.queue, event.tenantId, event.failures)
          : Messages.slowLaneLeave(event.queue, event.tenantId, event.failures);
      this.deps.logger.warn(log);
      this.deps.onSlowLane(event);
    }
  }
}

/** Lane shares as the gate uses them: the first lane also gets what no lane reserved. */
function laneShares(lanes: ResolvedFairnessOptions['lanes']): number[] {
  const spare = Math.max(0, 1 - lanes.reduce((sum, lane) => sum + lane.share, 0));
  return lanes.map((lane, index) => (index === 0 ? lane.share + spare : lane.share));
}
