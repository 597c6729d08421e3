import { Logger } from '@nestjs/common';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { Job, type Queue } from 'bullmq';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { JobDispatcher, PreparedJob } from '../core/queues/job-dispatcher.interface';
import type { RedisClient } from '../core/redis/tenant-queue.redis';
import { FairCommands, gateKeys } from './fair-gate.script';
import { FairGateEnqueue } from './fair-gate-enqueue';
import { recallRest, runAdmin } from './fair-gate-admin';
import { FairHints, GateReply } from './fair-gate.interface';
import { FairQueueConfig } from './fair-queue-config';
import { FairGateEvents } from './fair-gate-events';
import { FairGateReleases, FairOutcome } from './fair-gate-releases';
import { FairGateUpkeep } from './fair-gate-upkeep';
import { ResolvedFairnessOptions } from './fairness-options';
import { SlowLaneEvent } from './slow-lane-event.interface';

export type { FairOutcome } from './fair-gate-releases';

export interface FairGateDeps {
  /** Upkeep (release, tick, admin): a client that waits out a short outage. */
  commands: () => FairCommands;
  hints: (tenants: string[]) => Promise<FairHints>;
  onSlowLane: (event: SlowLaneEvent) => void;
  logger: Logger;
  /** Queues of the budget a call woke (a tenant they hold back may start): dispatch them. */
  kick?: (queues: string[]) => void;
  hintKeepMs?: number; // life of an idle tenant's hints in the gate (ms); undefined: kept
}

/**
 * The fair gate of one queue: its admission path. A job is written once, into BullMQ, held in
 * BullMQ's delayed set (`HOLD_UNTIL_MS`); its id waits in its tenant's backlog in the gate.
 * Every script call (enqueue, release, tick, admin) ends by admitting the next jobs in fair
 * order: the same script moves their ids into BullMQ's wait list (fair-bull.lua), and `settle`
 * takes its reply. No turn state lives in memory here. Its clocks (tick, wake-up, heartbeat,
 * close) are `upkeep`'s; what it runs with is `config`'s.
 */
export class FairGate implements JobDispatcher {
  readonly definition: TenantQueueDefinition;
  readonly options: ResolvedFairnessOptions;
  readonly upkeep: FairGateUpkeep;
  private readonly releases: FairGateReleases;
  private readonly events: FairGateEvents;
  private readonly enqueuer: FairGateEnqueue;

  /** `config`: the queue's, resolved once (`fairConfigOf`). */
  constructor(
    readonly config: FairQueueConfig,
    private readonly deps: FairGateDeps,
  ) {
    const { definition, options } = config;
    this.definition = definition;
    this.options = options;
    this.releases = new FairGateReleases({
      timeShare: this.config.timeShare,
      closed: () => this.upkeep.closed,
      call: (released) => this.releaseCall(released),
      // The tick finds the jobs of a failed call ended in BullMQ and frees their slots.
      failed: (error) => {
        if (!this.upkeep.closed)
          deps.logger.warn(`${tenantLogFields()} fair release ${definition.name}: ${error}`);
      },
    });
    this.events = new FairGateEvents(definition.name, options, deps.onSlowLane, deps.logger);
    this.enqueuer = new FairGateEnqueue(
      config,
      deps.hints,
      (reply) => this.settle(reply),
      () => this.kick(),
    );
    this.upkeep = new FairGateUpkeep(
      definition.name,
      options.tickMs,
      {
        runTick: (consumerId, concurrency, ttl) => this.runTick(consumerId, concurrency, ttl),
        settleCalls: () => this.releases.settle(),
        callsInFlight: () => this.releases.busy(),
      },
      deps.logger,
    );
  }

  /** The gate's base key. */
  get base(): string {
    return this.config.base;
  }

  /** Whether jobs of tenants no rule holds take their turns at add() (fair-turns.lua). */
  get turnsAtAdd(): boolean {
    return this.config.turnsAtAdd;
  }

  /** `share: 'time'`: a release carries the job's run time (triples instead of pairs). */
  get timeShare(): boolean {
    return this.config.timeShare;
  }

  private commands: FairCommands | undefined;

  /** Taken once: after shutdown a call fails instead of opening a new connection. */
  private get redis(): FairCommands {
    this.commands ??= this.deps.commands();
    return this.commands;
  }

  /** Enqueue path of the queue: each job written once, into BullMQ (`FairGateEnqueue`). */
  dispatch(queue: Queue, jobs: PreparedJob[]): Promise<void> {
    return this.enqueuer.dispatch(queue, jobs);
  }

  /** Up to `count` tenants waiting in this gate (in turn, or held by their rate limit), sampled. */
  async waitingTenants(count: number): Promise<string[]> {
    const client = this.redis as unknown as RedisClient;
    const ready =
      this.options.lanes.length > 1
        ? this.options.lanes.map((lane) => `${this.base}:ready:${lane.name}`)
        : [`${this.base}:ready`];
    const found = await Promise.all(
      [...ready, `${this.base}:limited`].map((key) => client.zrandmember(key, count)),
    );
    return [...new Set(found.flat())].slice(0, count);
  }

  /**
   * A job reached its final outcome: free its slot and admit the next jobs (batched, see
   * `FairGateReleases`). `runMs`, the job's run time, is sent only with `share: 'time'`.
   */
  release(jobId: string, outcome: FairOutcome, runMs?: number): void {
    this.releases.release(jobId, outcome, runMs);
  }

  /**
   * `share: 'time'`: a failed attempt is charged its run time (`runMs`) now, so retries cost a
   * tenant what they run; the job keeps its slot (its final outcome releases it, with 0 ms).
   */
  charge(jobId: string, runMs: number): void {
    this.releases.charge(jobId, runMs);
  }

  /** Whether BullMQ got this job at the top, as a floor tenant's: priority 0, or `lifo`. */
  isTop(job: Job): boolean {
    return this.config.prioritized ? !job.priority : job.opts.lifo === true;
  }

  /**
   * Whether the job skipped the gate at its turn (priority by turn, fair-turns.lua): an even
   * BullMQ priority it did not ask for itself. Such a job holds no slot. A job the gate admitted
   * came through its hold, whose `delay` its stored options keep (0 from admission on,
   * fair-bull.lua): it holds a slot whatever priority an operator's `changePriority` gave it since.
   */
  holdsNoSlot(job: Job): boolean {
    if (!this.config.turnsAtAdd || job.opts.priority || job.opts.delay !== undefined) return false;
    const priority = Number(job.priority);
    return priority > 0 && priority % 2 === 0;
  }

  /**
   * Frees a floor tenant's job in a call of its own and waits for it: what it admits is in BullMQ
   * before this worker slot fetches its next job, so the slot goes to the tenant's next job.
   */
  releaseNow(jobId: string, outcome: FairOutcome, runMs?: number): Promise<void> {
    return this.releases.releaseNow(jobId, outcome, runMs);
  }

  /** One release script call: frees, dispatches and moves what it admitted into BullMQ. */
  private async releaseCall(released: (string | number)[]): Promise<void> {
    const { base, script, slowLane } = this.config;
    this.settle(
      await this.redis.tqFairRelease(
        gateKeys(base),
        script,
        this.options.dispatchBatch,
        slowLane,
        ...released,
      ),
    );
  }

  /**
   * Another queue of this queue's budget freed a slot of a tenant this gate holds back: one
   * release call (coalesced with any due) puts it back in turn and dispatches.
   */
  kick(): void {
    this.releases.kick();
  }

  /** A local worker consumes this queue; its concurrency sizes the shared window. */
  addConsumer(concurrency: number): void {
    this.upkeep.addConsumer(concurrency);
  }

  start(): void {
    this.upkeep.start();
  }

  /** Runs the upkeep script now (also on a timer): frees what ended, dispatches. */
  tick(leaving = false): Promise<void> {
    return this.upkeep.tick(leaving);
  }

  /** The upkeep script once, for `upkeep`. */
  private async runTick(consumerId: string, concurrency: number, ttl: number): Promise<void> {
    const { base, script, slowLane, jobPrefix } = this.config;
    const { dispatchBatch, windowPerSlot } = this.options;
    this.settle(
      await this.redis.tqFairTick(
        gateKeys(base),
        script,
        dispatchBatch,
        slowLane,
        jobPrefix,
        this.deps.hintKeepMs ?? '',
        consumerId,
        concurrency,
        ttl,
        windowPerSlot,
      ),
    );
  }

  /** Runs an admin operation (weight, cap, min, pause, resume); the script admits what it can. */
  admin(tenantId: string, op: string, value = ''): Promise<unknown[]> {
    const { base, script } = this.config;
    const { dispatchBatch } = this.options;
    const call = (op: string, value: string): Promise<unknown[]> =>
      this.redis.tqFairAdmin(gateKeys(base), script, dispatchBatch, tenantId, op, value);
    return runAdmin(call, op, value, (reply) => this.settle(reply));
  }

  close(): Promise<void> {
    return this.upkeep.close();
  }

  /**
   * What every admitting call ends with: its events (the slow lane, the floors' bound), the wake
   * time of the next rate-limited tenant, the queues of the budget it woke. (The jobs it admitted
   * are in BullMQ's wait list already.)
   */
  private settle([events, , wake, woken]: GateReply): void {
    this.events.emit(events);
    if (this.config.turnsAtAdd) recallRest(events, this, this.deps.logger);
    this.upkeep.wakeIn(Number(wake));
    if (woken) this.deps.kick?.(woken);
  }
}
