import { Logger } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { TenantBacklogFullError } from './errors';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import {
  JobDispatcher,
  PreparedJob,
  TenantJobOptions,
  directDispatcher,
} from '../core/queues/job-dispatcher.interface';
import { Messages } from '../tenant-queue.messages';
import { SYSTEM_BUCKET } from '../tenant-queue.constants';
import type { RedisClient } from '../core/redis/tenant-queue.redis';
import { FairCommands } from './fair-gate.script';
import { AdmittedJob, FairGateSender } from './fair-gate-sender';
import { FairGateUpkeep } from './fair-gate-upkeep';
import { ResolvedFairnessOptions, encodeRate } from './fairness-options';
import { assertLane } from './lanes';
import { withFairKey } from './fair-key';
import { SlowLaneEvent } from './slow-lane-event.interface';

/** Final outcome of a job: completed, failed for good, or cancelled (not a tenant failure). */
export type FairOutcome = 'c' | 'f' | 'x';

/**
 * Directory/tier hints per tenant: [weight, cap, rate ("T:tol:..." or "none"), lane weights
 * (JSON), floor], `false` where neither says anything.
 */
export type FairHint = [
  number | false,
  number | false,
  string | false,
  string | false,
  number | false,
];
/** Hints by tenant id (a Map: a tenant may be called `constructor` or `__proto__`). */
export type FairHints = Map<string, FairHint>;

/** Bucket of jobs enqueued without a tenant (system jobs on a fair queue). */
export const SYSTEM_TENANT = SYSTEM_BUCKET;

/** Releases per call, and calls in flight at once (more queue up and go in the next call). */
const RELEASE_BATCH = 1000;
const RELEASE_CALLS = 2;

export interface FairGateDeps {
  /** Upkeep (release, tick, admin): a client that waits out a short outage. */
  commands: () => FairCommands;
  /** Enqueue: the producer's client (no offline queue), so a failed enqueue is never written later. */
  enqueueCommands: () => FairCommands;
  bullQueue: () => Queue;
  hints: (tenants: string[]) => Promise<FairHints>;
  onSlowLane: (event: SlowLaneEvent) => void;
  logger: Logger;
  /** Base of the queue's budget's shared keys (`fair-budget.lua`); absent: no budget. */
  budgetBase?: string;
  /** Queues of the budget a call woke (a tenant they hold back may start): dispatch them. */
  kick?: (queues: string[]) => void;
}

/**
 * The fair gate of one queue: its admission path. Jobs wait in per-tenant backlogs in Redis;
 * every script call (enqueue, release, tick, admin) ends by admitting the next jobs in fair
 * order, which this process then hands to BullMQ under their own job ids. No turn state lives
 * in memory here. Its clocks (tick, wake-up, heartbeat, close) are `upkeep`'s, the hand-over
 * to BullMQ is `sender`'s.
 */
export class FairGate implements JobDispatcher {
  readonly base: string;
  private readonly config: string;
  private readonly slowConfig: string;
  private readonly jobPrefix: string;
  readonly upkeep: FairGateUpkeep;
  private pending: (string | number)[] = [];
  /** `share: 'time'`: a release carries the job's run time (triples instead of pairs). */
  readonly timeShare: boolean;
  private readonly releaseStride: number;
  /** Ids BullMQ has taken since the last call: acknowledged in the next release or tick call. */
  private acks: string[] = [];
  private releaseCalls = 0;
  /** A release call is due with nothing to release: a queue of the budget woke this one. */
  private kicked = false;
  private readonly calls = new Set<Promise<void>>();
  private readonly sender: FairGateSender;
  private readonly laneIndex = new Map<string, number>();
  private readonly laneOfJob = new Map<string, string>();
  private readonly prioritized: boolean;

  constructor(
    readonly definition: TenantQueueDefinition,
    readonly options: ResolvedFairnessOptions,
    private readonly deps: FairGateDeps,
  ) {
    this.base = `${definition.bullPrefix}:~fair`;
    this.jobPrefix = `${definition.bullPrefix}:${definition.name}:`;
    this.timeShare = options.share === 'time';
    this.releaseStride = this.timeShare ? 3 : 2;
    this.prioritized = options.lanes.length > 1 || options.priorityByTurn;
    this.upkeep = new FairGateUpkeep(
      definition.name,
      options.tickMs,
      {
        runTick: (consumerId, concurrency, ttl) => this.runTick(consumerId, concurrency, ttl),
        settleCalls: () => Promise.all([...this.calls]).then(() => undefined),
        callsInFlight: () => this.calls.size > 0,
        settleSends: () => this.sender.settle(),
      },
      deps.logger,
    );
    this.config = JSON.stringify({
      jp: this.jobPrefix,
      resend: options.resendAfterMs,
      tp: options.priorityByTurn && options.lanes.length < 2,
      dw: options.defaultWeight,
      dcap: options.defaultConcurrency,
      ...(options.defaultMinConcurrency ? { dmin: options.defaultMinConcurrency } : {}),
      k: options.maxConsecutive,
      win: options.window,
      minWin: options.minWindow,
      lease: options.leaseMs,
      slowShare: options.slowLane.share,
      ...(options.rateLimit ? { rl: encodeRate(options.rateLimit) } : {}),
      ...(this.timeShare ? { ts: true } : {}),
      ...(deps.budgetBase ? { bg: deps.budgetBase, bn: definition.name } : {}),
      ...(options.fairKey ? { fk: options.fairKey } : {}),
      ...(options.lanes.length
        ? { lanes: options.lanes.map((l) => l.name), shares: laneShares(options.lanes) }
        : {}),
    });
    this.sender = new FairGateSender({
      queueName: definition.name,
      lanes: options.lanes.length > 1,
      prioritized: this.prioritized,
      bullQueue: deps.bullQueue,
      logger: deps.logger,
      delivered: (jobs) => this.acknowledge(jobs),
      dropped: (jobId) => this.release(jobId, 'x', 0),
      refused: (refused) => this.refuse(refused),
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

  private enqueueClient: FairCommands | undefined;

  private get enqueueRedis(): FairCommands {
    this.enqueueClient ??= this.deps.enqueueCommands();
    return this.enqueueClient;
  }

  /**
   * Enqueue path of the queue: into the tenants' backlogs, then whatever the window admits, in
   * one script call, so a refused call (a backlog full) writes nothing. The admitted jobs are
   * durable in the gate: their hand-over to BullMQ is not awaited (the tick re-sends them).
   */
  async dispatch(queue: Queue, jobs: PreparedJob[]): Promise<void> {
    // A delayed job would hold a slot while it waits: it goes to BullMQ directly, after the gate
    // took the others (the gate's refusal is the only one left once `validate` passed).
    const delayed = jobs.filter((job) => (job.opts.delay ?? 0) > 0);
    const gated = delayed.length ? jobs.filter((job) => !((job.opts.delay ?? 0) > 0)) : jobs;
    if (gated.length) await this.enqueue(gated);
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

  /** The gate's own checks of jobs about to be dispatched (their lanes), before anything is written. */
  validate(jobs: readonly PreparedJob[]): void {
    for (const job of jobs) {
      const asked = (job.opts as TenantJobOptions).lane;
      if (asked !== undefined && !this.laneIndex.has(asked)) assertLane(this.definition, asked);
    }
  }

  private async enqueue(gated: PreparedJob[]): Promise<void> {
    this.validate(gated);
    const tenants = [...new Set(gated.map((job) => job.tenantId ?? SYSTEM_TENANT))];
    const hints: (string | FairHint)[] = [];
    for (const [tenant, hint] of await this.deps.hints(tenants)) hints.push(tenant, hint);
    const args: string[] = [];
    const admitted: AdmittedJob[] = [];
    const keys = this.options.fairKey;
    for (const job of gated) {
      const [lane, opts] = keys
        ? withFairKey(this.laneOf(job), job, keys === 'actor')
        : this.laneOf(job);
      const json = JSON.stringify({ n: job.name, d: job.data, o: opts });
      args.push(job.opts.jobId, job.tenantId ?? SYSTEM_TENANT, lane, json);
      admitted.push({ name: job.name, data: job.data, opts: opts as PreparedJob['opts'] });
    }
    const [status, second, third, woken] = await this.enqueueRedis.tqFairEnqueue(
      this.base,
      this.config,
      this.options.dispatchBatch,
      this.options.maxBacklog,
      JSON.stringify(hints),
      0,
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
    // Whatever this process admits of these later skips the JSON round trip.
    this.sender.remember(admitted);
    this.upkeep.wakeIn(Number(third));
    if (woken) this.deps.kick?.(woken);
    void this.sender.send(second as string[]);
  }

  /**
   * The job's lane (its `lane` option, else its name's lane, else the default) and its options
   * for BullMQ without `lane`. The gate gives admitted jobs their BullMQ priority (see dispatch in
   * fair-dispatch.lua); a delayed job, which skips the gate, runs as work beyond its lane's share.
   */
  private laneOf(job: PreparedJob): [string, object] {
    const asked = (job.opts as TenantJobOptions).lane;
    if (!this.laneIndex.size) return ['', job.opts];
    const { lane: _lane, ...opts } = job.opts as TenantJobOptions;
    return [asked ?? this.laneOfJob.get(job.name) ?? this.options.defaultLane, opts];
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

  /**
   * A job reached its final outcome: free its slot and admit the next jobs. Releases are
   * batched, at most `RELEASE_CALLS` calls in flight; each call also acknowledges what BullMQ
   * took since the last one. `runMs`, the job's run time, is sent only with `share: 'time'`.
   */
  release(jobId: string, outcome: FairOutcome, runMs?: number): void {
    // After close the lease reaper of a live process frees the slot.
    if (this.upkeep.closed) return;
    if (this.timeShare) this.pending.push(jobId, outcome, runMs ?? '');
    else this.pending.push(jobId, outcome);
    this.pump();
  }

  /**
   * `share: 'time'`: a failed attempt is charged its run time (`runMs`) now, so retries cost a
   * tenant what they run; the job keeps its slot (its final outcome releases it, with 0 ms).
   * Nothing in `jobs` mode.
   */
  charge(jobId: string, runMs: number): void {
    if (this.upkeep.closed || !this.timeShare) return;
    this.pending.push(jobId, 'r', runMs);
    this.pump();
  }

  /**
   * Whether BullMQ got this job at the top priority, as every job of a tenant with a floor
   * (fair-floor.lua): priority 0 where the gate prioritizes the others, else `lifo`.
   */
  isTop(job: Job): boolean {
    return this.prioritized ? !job.opts.priority : job.opts.lifo === true;
  }

  /**
   * Frees a floor tenant's job in a call of its own and waits for what that call admits to reach
   * BullMQ: the tenant's next job is then at BullMQ's head before the worker slot this job frees
   * fetches its next job, so the slot goes straight to it.
   */
  releaseNow(jobId: string, outcome: FairOutcome, runMs?: number): Promise<void> {
    if (this.upkeep.closed) return Promise.resolve();
    const pair = this.timeShare ? [jobId, outcome, runMs ?? ''] : [jobId, outcome];
    return this.releaseCall(pair, true);
  }

  private pump(): void {
    while (
      this.releaseCalls < RELEASE_CALLS &&
      (this.pending.length > 0 || this.kicked || this.acks.length >= RELEASE_BATCH)
    ) {
      this.kicked = false;
      this.releaseCalls++;
      void this.releaseCall(
        this.pending.splice(0, this.releaseStride * RELEASE_BATCH),
        false,
      ).finally(() => {
        this.releaseCalls--;
        this.pump();
      });
    }
  }

  /**
   * One release call: frees `released` (flat pairs, triples with `share: 'time'`), acknowledges
   * what BullMQ took since the last call, dispatches, and hands what it admitted to BullMQ. The
   * promise ends after the script (`awaitSend` false) or once the admitted jobs are in BullMQ.
   */
  private releaseCall(released: (string | number)[], awaitSend: boolean): Promise<void> {
    const acks = this.takeAcks();
    const call: Promise<void> = this.redis
      .tqFairRelease(
        this.base,
        this.config,
        this.options.dispatchBatch,
        this.slowConfig,
        acks.length,
        ...acks,
        ...released,
      )
      .then(
        ([events, jobs, wake, woken]) => {
          this.emit(events);
          this.upkeep.wakeIn(Number(wake));
          if (woken) this.deps.kick?.(woken);
          const sent = this.sender.send(jobs);
          return awaitSend ? sent : undefined;
        },
        (error) => {
          // The leases of this batch expire and the reaper frees them; unacknowledged sends
          // are found in BullMQ by the tick.
          if (!this.upkeep.closed)
            this.deps.logger.warn(`fair release ${this.definition.name}: ${error}`);
        },
      )
      .finally(() => this.calls.delete(call));
    this.calls.add(call);
    return call;
  }

  /**
   * Another queue of this queue's budget freed a slot of a tenant this gate holds back: one
   * release call (coalesced with any due) puts it back in turn and dispatches.
   */
  kick(): void {
    if (this.upkeep.closed) return;
    this.kicked = true;
    this.pump();
  }

  private takeAcks(): string[] {
    if (this.acks.length <= 4 * RELEASE_BATCH) {
      const acks = this.acks;
      this.acks = [];
      return acks;
    }
    return this.acks.splice(0, 4 * RELEASE_BATCH);
  }

  /** A local worker consumes this queue; its concurrency sizes the shared window. */
  addConsumer(concurrency: number): void {
    this.upkeep.addConsumer(concurrency);
  }

  start(): void {
    this.upkeep.start();
  }

  /** Runs the upkeep script now (also on a timer): reaps leases, re-sends, dispatches. */
  tick(leaving = false): Promise<void> {
    return this.upkeep.tick(leaving);
  }

  /** The upkeep script once, for `upkeep`: with the acknowledgements taken since the last call. */
  private async runTick(consumerId: string, concurrency: number, ttl: number): Promise<void> {
    const acks = this.takeAcks();
    const [events, jobs, wake, woken] = await this.redis.tqFairTick(
      this.base,
      this.config,
      this.options.dispatchBatch,
      this.slowConfig,
      this.jobPrefix,
      this.options.resendAfterMs,
      consumerId,
      concurrency,
      ttl,
      this.options.windowPerSlot,
      acks.length,
      ...acks,
    );
    this.emit(events);
    this.upkeep.wakeIn(Number(wake));
    if (woken) this.deps.kick?.(woken);
    await this.sender.send(jobs);
  }

  /** Runs an admin operation (weight, cap, min, pause, resume) and sends what it admits. */
  async admin(tenantId: string, op: string, value = ''): Promise<unknown[]> {
    const reply = await this.redis.tqFairAdmin(
      this.base,
      this.config,
      this.options.dispatchBatch,
      tenantId,
      op,
      value,
    );
    if (op !== 'get' && op !== 'floors') {
      this.upkeep.wakeIn(Number(reply[2]));
      if (reply[3]) this.deps.kick?.(reply[3] as string[]);
      await this.sender.send((reply as [unknown, string[]])[1]);
    }
    return reply;
  }

  close(): Promise<void> {
    return this.upkeep.close();
  }

  private acknowledge(jobs: AdmittedJob[]): void {
    for (const job of jobs) this.acks.push(job.opts.jobId);
    if (this.acks.length >= RELEASE_BATCH) this.pump();
  }

  /**
   * BullMQ will never take these jobs (or this process cannot read their gate entries): each
   * becomes a failed BullMQ job with the reason (fair-refuse.lua), its slot freed.
   */
  private async refuse(refused: [AdmittedJob, string][]): Promise<void> {
    const args: string[] = [];
    for (const [job, reason] of refused) {
      this.deps.logger.warn(reason);
      args.push(job.opts.jobId, reason, job.name, JSON.stringify(job.data), '{"attempts":1}');
    }
    const [events, jobs, wake, woken] = await this.redis.tqFairRefuse(
      this.base,
      this.config,
      this.options.dispatchBatch,
      this.slowConfig,
      '',
      ...args,
    );
    this.emit(events);
    this.upkeep.wakeIn(Number(wake));
    if (woken) this.deps.kick?.(woken);
    void this.sender.send(jobs);
  }

  private floorsWarnedAt = -Infinity;

  /**
   * The floors of the tenants with work wanted more slots than BullMQ may hold beyond the window
   * (the workers' slots): the gate admitted up to that bound and `below` floor tenants wait.
   * Warned at most once a minute.
   */
  private warnFloorsBounded(below: number): void {
    const now = Date.now();
    if (now - this.floorsWarnedAt < FLOORS_WARN_MS) return;
    this.floorsWarnedAt = now;
    const { name } = this.definition;
    this.deps.logger.warn(
      Messages.floorsBounded(name, below, this.options.defaultMinConcurrency),
    );
  }

  private emit(events: (string | number)[]): void {
    for (let i = 0; i + 2 < events.length; i += 3) {
      if (events[i] === 'floors') {
        this.warnFloorsBounded(Number(events[i + 2]));
        continue;
      }
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

/** How often the gate warns that the floors were held to their bound (see fair-dispatch.lua). */
const FLOORS_WARN_MS = 60_000;

/** Lane shares as the gate uses them: the first lane also gets what no lane reserved. */
function laneShares(lanes: ResolvedFairnessOptions['lanes']): number[] {
  const spare = Math.max(0, 1 - lanes.reduce((sum, lane) => sum + lane.share, 0));
  return lanes.map((lane, index) => (index === 0 ? lane.share + spare : lane.share));
}
