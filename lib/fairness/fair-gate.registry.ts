import { FailedBootCloser } from '../core/processor/failed-boot.closer';
import { TenantWorkerLauncher } from '../core/processor/worker-launcher';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';
import { EventEmitter } from 'node:events';
import { outsideTenantContext } from '../core/context/outside-tenant-context';
import { callListener, thrownText } from '../core/logging/call-listener';
import { randomUUID } from 'node:crypto';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import {
  InvalidTenantQueueOptionsError,
  TenantPortUnavailableError,
  parseCancelReason,
} from '../core/errors';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { TenantLimits } from '../core/types/tenant-tier-options.interface';
import { TenantTiers } from '../core/tenants/tenant-tiers.service';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core/options/core.options';
import { TenantWorkerPlugin } from '../core/processor/tenant-worker-plugin.decorator';
import { TenantProcessorOptions } from '../core/processor/tenant-processor.decorator';
import { WorkerEvents } from '../core/processor/tenant-job-pipeline';
import { Messages } from '../tenant-queue.messages';
import { TenantQueueRedis, settlesWithin } from '../core/redis/tenant-queue.redis';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { TenantDispatcher } from '../core/queues/queue-seams.decorator';
import { TenantEnvelopeCodec } from '../core/envelope/tenant-envelope.codec';
import { FairGate } from './fair-gate';
import { FairHint, FairHints, SYSTEM_TENANT } from './fair-gate.interface';
import { fairCommands } from './fair-gate.script';
import { budgetOf } from './modes/budget/budget';
import { LAYOUT_CHECK_MS, checkLayout } from './fair-layout.check';
import { releaseHeld } from './fair-held-release';
import type { Queue } from 'bullmq';
import { fairConfigOf } from './fair-queue-config';
import { encodeRate } from './modes/rate-limit/rate';
import { SlowLaneEvent } from './slow-lane-event.interface';

/**
 * @internal Owns the fair gate of every queue with fairness on: claims their enqueue path,
 * attaches slot release to their workers, runs the upkeep ticks, and closes it all on shutdown.
 */
@Injectable()
@TenantDispatcher(10)
@TenantWorkerPlugin(20)
export class FairGateRegistry
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly gates = new Map<string, FairGate>();
  private readonly hintSent = new Map<string, number>();
  private readonly hintTtl: number;
  /**
   * How long an idle tenant's hints stay in a gate after they were written: a process that sent
   * them within its `tierCacheMs` sends none with its next jobs (whose call may wait up to
   * `enqueueTimeoutMs` for Redis), so they must still be there when those jobs arrive.
   */
  private readonly hintKeepMs: number;
  private readonly logger = new TenantQueueLogger('TenantFairness');
  readonly events = new EventEmitter();
  private readonly unsubscribe: () => void;
  private sweepTimer: NodeJS.Timeout | undefined;
  private floorTimer: NodeJS.Timeout | undefined;
  private epochTimer: NodeJS.Timeout | undefined;
  private layoutTimer: NodeJS.Timeout | undefined;
  /** Queue and other layout (or held-job warning) already warned about. */
  private readonly layoutsWarned = new Set<string>();
  /** `releaseHeld`'s next looks. */
  private readonly heldTimers = new Set<NodeJS.Timeout>();
  private closing = false;
  private sweeping = false;
  /** The hints epoch this process last read (see `checkEpoch`). */
  private epoch: string | null | undefined;
  private readonly epochKey: string;

  constructor(
    private readonly registry: TenantQueueRegistry,
    private readonly redis: TenantQueueRedis,
    private readonly tiers: TenantTiers,
    @Inject(TENANT_QUEUE_OPTIONS) options: ResolvedTenantQueueOptions,
    private readonly launcher: TenantWorkerLauncher,
    private readonly codec: TenantEnvelopeCodec,
    private readonly failedBoot: FailedBootCloser,
  ) {
    this.hintTtl = options.tierCacheMs;
    this.hintKeepMs = options.tierCacheMs + options.enqueueTimeoutMs + HINT_KEEP_MARGIN_MS;
    this.epochKey = `{${options.prefix}:fair}:hints-epoch`;
    this.unsubscribe = tiers.onRefresh((tenantId) => this.refreshHints(tenantId));
  }

  /** Validates every fair queue's options at bootstrap (a typed error names the field). */
  onModuleInit(): Promise<void> {
    return this.failedBoot.guard(() => {
      for (const name of this.registry.getQueueNames()) {
        this.gateFor(this.registry.getQueue(name).definition);
      }
    });
  }

  onApplicationBootstrap(): void {
    for (const gate of this.gates.values()) {
      gate.start();
      void this.checkLayout(gate);
    }
    for (const name of this.registry.getQueueNames()) {
      const { definition, bullQueue } = this.registry.getQueue(name);
      if (!fairConfigOf(definition)) void this.releaseHeld(bullQueue, definition.bullPrefix);
    }
    if (this.gates.size > 0) {
      void this.checkRedisCommands();
      this.layoutTimer = setInterval(() => {
        for (const gate of this.gates.values()) void this.checkLayout(gate);
      }, LAYOUT_CHECK_MS);
      this.layoutTimer.unref();
    }
    // Once this app's workers (started at bootstrap too) have joined the window.
    this.floorTimer = setTimeout(() => {
      for (const gate of this.gates.values()) {
        void gate
          .tick()
          .then(() => this.checkFloors(gate))
          .catch((error) => this.logger.warn(`${tenantLogFields()} floor check: ${error}`));
      }
    }, 0);
    this.floorTimer.unref();
    if (this.tiers.configured && this.gates.size > 0) {
      this.sweepTimer = setInterval(() => void this.sweepHints(), Math.max(1000, this.hintTtl));
      this.sweepTimer.unref();
      this.epochTimer = setInterval(() => void this.checkEpoch(), EPOCH_CHECK_MS);
      this.epochTimer.unref();
    }
  }

  /**
   * The gate's scripts use Redis 6.2's HRANDFIELD and LPOP with a count. BullMQ runs on 5.0 and
   * only warns, and an older server (Debian 11's and Ubuntu 22.04's package is 6.0) fails each
   * script call with "Unknown Redis command": said once at boot, naming the version. Asked of the
   * server's command table, so a command renamed or disabled there counts as missing too.
   */
  private async checkRedisCommands(): Promise<void> {
    try {
      const client = this.redis.client;
      const [hrandfield, lpop] = (await client.call('COMMAND', 'INFO', 'HRANDFIELD', 'LPOP')) as (
        unknown[] | null
      )[];
      const missing = [
        ...(hrandfield ? [] : ['HRANDFIELD']),
        // LPOP's arity is -2 (a count may follow the key) from 6.2 on, 2 before.
        ...(lpop?.[1] === -2 ? [] : ['LPOP with a count']),
      ];
      if (missing.length === 0) return;
      const info = String(await client.info('server').catch(() => ''));
      const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'of unknown version';
      this.logger.error(
        `${tenantLogFields()} ${Messages.redisTooOldForFairness(version, missing.join(' and '))}`,
      );
    } catch {
      // Redis away at boot, or no COMMAND there: the scripts' own errors will say what fails.
    }
  }

  /**
   * Runs what a fair gate held on a queue this process runs without fairness (`releaseHeld`);
   * looks again while a worker process with fairness is alive to admit them. Each warning once.
   */
  private async releaseHeld(queue: Queue, bullPrefix: string): Promise<void> {
    try {
      const result = await releaseHeld(this.redis.client, queue, bullPrefix);
      if (!result) return;
      const seen = `${queue.name}\n${result.kind}`;
      if (!this.layoutsWarned.has(seen)) {
        this.layoutsWarned.add(seen);
        this.logger.warn(`${tenantLogFields()} ${result.warning}`);
      }
      if (result.retryMs === undefined || this.closing) return;
      const timer = setTimeout(() => {
        this.heldTimers.delete(timer);
        void this.releaseHeld(queue, bullPrefix);
      }, result.retryMs);
      timer.unref();
      this.heldTimers.add(timer);
    } catch {
      // Redis away: the connection's own lines say so.
    }
  }

  /**
   * Takes a backlog queued under other lanes or fair keys into the gate's keys (`checkLayout`),
   * puts the tenants with a backlog here back in turn (a gate of the other layout freed their
   * slots without: fair-admin.lua, `wake`), and warns once per queue and other layout.
   */
  private async checkLayout(gate: FairGate): Promise<void> {
    try {
      const change = await checkLayout(this.redis.client, gate.config);
      if (!change) return;
      // A page of tenants a call, until the last page.
      let page = '';
      do {
        page = String((await gate.admin('', 'wake', page))[5] ?? '');
      } while (page !== '');
      const seen = `${gate.definition.name}\n${change.before}`;
      if (this.layoutsWarned.has(seen)) return;
      this.layoutsWarned.add(seen);
      this.logger.warn(`${tenantLogFields()} ${change.warning}`);
    } catch {
      // Redis away: the connection's own lines say so; the next check runs later.
    }
  }

  /**
   * Notices a Redis that lost its data (restarted empty, flushed, failed over to an empty
   * replica): the gates' copies of the tenants' limits went with it, while this process still
   * thinks it sent them within `tierCacheMs`. A random epoch lives in Redis; whichever process
   * finds it missing writes a new one, and every process that reads a new one sends the limits
   * again, at once for the tenants waiting, else with their next enqueue. Two commands a second.
   */
  private async checkEpoch(): Promise<void> {
    try {
      const client = this.redis.client;
      await client.set(this.epochKey, randomUUID(), 'NX');
      const epoch = await client.get(this.epochKey);
      const changed = this.epoch !== undefined && epoch !== this.epoch;
      this.epoch = epoch;
      if (!changed) return;
      this.hintSent.clear();
      await this.sweepHints();
    } catch {
      // Redis away: the connection's own lines say so; the next check runs in a second.
    }
  }

  /**
   * Re-reads the limits of up to 100 waiting tenants per gate once per `tierCacheMs`, so a tier
   * or directory change reaches a tenant whose jobs are already queued even if it enqueues
   * nothing new and nobody calls `TenantTiers.refresh`.
   */
  private async sweepHints(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      for (const gate of [...this.gates.values()]) {
        const tenants = await gate.waitingTenants(HINT_SWEEP);
        const hints = await this.hints(gate.definition, tenants);
        for (const [tenantId, hint] of hints) {
          await gate.admin(tenantId, 'hints', JSON.stringify(hint));
        }
      }
    } catch (error) {
      this.logger.warn(`${tenantLogFields()} tier sweep: ${error}`);
    } finally {
      this.sweeping = false;
    }
  }

  /** @internal The fair gate claims the dispatch path of each fair queue. */
  dispatcherFor(definition: TenantQueueDefinition): FairGate | undefined {
    return this.gateFor(definition);
  }

  gateFor(definition: TenantQueueDefinition): FairGate | undefined {
    const config = fairConfigOf(definition);
    if (!config) return undefined;
    let gate = this.gates.get(definition.name);
    if (!gate) {
      gate = new FairGate(config, {
        commands: () => fairCommands(this.redis.client),
        hints: (tenants) => this.hints(definition, tenants),
        // Outside any tenant context: the gate call that saw the change may have started in a job's.
        onSlowLane: (event) => outsideTenantContext(() => this.emitSlowLane(event)),
        logger: this.logger,
        kick: (queues) => {
          for (const queue of queues) this.gates.get(queue)?.kick();
        },
        hintKeepMs: this.tiers.configured ? this.hintKeepMs : undefined,
      });
      this.gates.set(definition.name, gate);
    }
    return gate;
  }

  /** The gate of a registered fair queue, or a typed error saying what to do. */
  get(queueName: string): FairGate {
    const gate = this.gateFor(this.registry.getQueue(queueName).definition);
    if (!gate) throw new InvalidTenantQueueOptionsError(Messages.fairnessOff(queueName));
    return gate;
  }

  /** The gates of this app that share `gate`'s budget (itself included); just it without one. */
  budgetGates(gate: FairGate): FairGate[] {
    const budget = budgetOf(gate.definition);
    if (budget === undefined) return [gate];
    return [...this.gates.values()].filter((other) => budgetOf(other.definition) === budget);
  }

  onSlowLane(listener: (event: SlowLaneEvent) => void): () => void {
    this.events.on('slowLane', listener);
    return () => this.events.off('slowLane', listener);
  }

  /** Tells each listener; what one throws or rejects is logged (see `callListener`). */
  private emitSlowLane(event: SlowLaneEvent): void {
    const failed = (error: unknown) =>
      this.logger.error(
        `${tenantLogFields({ tenantId: event.tenantId })} onSlowLane listener threw: ${thrownText(error)}`,
      );
    for (const listener of this.events.listeners('slowLane')) {
      callListener(listener as (event: SlowLaneEvent) => unknown, event, failed);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.epochTimer) clearInterval(this.epochTimer);
    if (this.layoutTimer) clearInterval(this.layoutTimer);
    this.closing = true;
    for (const timer of this.heldTimers) clearTimeout(timer);
    this.heldTimers.clear();
    if (this.floorTimer) clearTimeout(this.floorTimer);
    // Workers first, so their last completions still free slots before the gates close.
    await this.launcher.close();
    const gates = [...this.gates.values()];
    this.gates.clear();
    // Their last release calls and tick wait for Redis like any command: bounded, as the
    // workers' close is, so app.close() ends with Redis away (the calls fail once it quits).
    const closed = Promise.all(gates.map((gate) => gate.close()));
    if (!(await settlesWithin(closed, this.redis.shutdownMsLeft()))) {
      this.logger.warn(
        `${tenantLogFields()} ${Messages.shutdownTimedOut('Closing the fair gates', this.redis.shutdownTimeoutMs)}`,
      );
    }
    this.events.removeAllListeners();
    this.unsubscribe();
  }

  /** @internal */
  attach(
    worker: WorkerEvents,
    definition: TenantQueueDefinition,
    options: TenantProcessorOptions,
  ): void {
    const gate = this.gateFor(definition);
    if (!gate) return;
    gate.addConsumer(options.concurrency ?? 1);
    // Successes are released by FairReleaseStage, before BullMQ records them.
    worker.on('failed', (job, error) => {
      // Only the final outcome frees the slot: a retried attempt keeps it. With `share: 'time'`
      // FairReleaseStage charged every failed attempt its run time already: 0 ms here.
      if (!job?.id || !job.finishedOn) return;
      // Neither a cancellation nor our own directory or checker failing (an outage while the
      // job was guarded) is the tenant's failure: neither counts for its slow lane.
      const notTheTenants =
        error instanceof TenantPortUnavailableError || !!parseCancelReason(job.failedReason);
      if (gate.holdsNoSlot(job)) {
        // Skipped the gate at its turn: no slot, but a final failure counts for its tenant's
        // slow lane (named here: with removeOnFail the job is gone when the release runs).
        const tenant = this.codec.envelopeOf(job)?.tenantId ?? SYSTEM_TENANT;
        if (!notTheTenants) gate.release(job.id, `d${tenant}`, 0);
        return;
      }
      gate.release(job.id, notTheTenants ? 'x' : 'f', 0);
    });
  }

  /**
   * Weight, cap, rate limit and lane weights of each tenant from its tier and directory record,
   * written to Redis with the enqueue at most once per `tierCacheMs` per tenant (and at once on
   * `TenantTiers.refresh`). Nothing when no directory is configured.
   */
  private async hints(definition: TenantQueueDefinition, tenants: string[]): Promise<FairHints> {
    const out: FairHints = new Map();
    if (!this.tiers.configured) return out;
    const now = Date.now();
    const key = (tenantId: string) => `${definition.name}\u0000${tenantId}`;
    const stale = tenants.filter(
      (t) => t !== SYSTEM_TENANT && (this.hintSent.get(key(t)) ?? -Infinity) + this.hintTtl <= now,
    );
    if (!stale.length) return out;
    const limits = await this.tiers.limitsFor(stale, definition.poolOf ?? definition.name);
    for (const [tenantId, tenantLimits] of limits) {
      out.set(tenantId, toHint(tenantLimits));
      if (this.hintSent.size >= MAX_HINTS_SENT)
        this.hintSent.delete(this.hintSent.keys().next().value!);
      this.hintSent.set(key(tenantId), now);
    }
    return out;
  }

  /**
   * Writes a tenant's tier/directory limits to one gate if they are older than `tierCacheMs`, so
   * reading its state (`TenantFairness.getTenant`) shows its tier before its first job.
   */
  async ensureHints(gate: FairGate, tenantId: string): Promise<void> {
    const hint = (await this.hints(gate.definition, [tenantId])).get(tenantId);
    if (hint) await gate.admin(tenantId, 'hints', JSON.stringify(hint));
  }

  /**
   * Warns when the floors (minConcurrency) the gate knows exceed the queue's live worker slots:
   * the sum of the floors recorded per tenant (run-time settings, and the tier/directory floors of
   * the tenants seen), and any single floor a tenant would get from the queue default or a tier.
   */
  async checkFloors(gate: FairGate): Promise<void> {
    const [sum, tenants, slots] = (await gate.admin('', 'floors')).map(Number);
    if (!(slots > 0)) return;
    const queue = gate.definition.name;
    if (sum > slots) {
      this.logger.warn(
        `${tenantLogFields()} ${Messages.floorsOverSlots(queue, `the floors of ${tenants} tenants recorded`, sum, slots)}`,
      );
    }
    const single: [string, number][] = [['the queue default', gate.options.defaultMinConcurrency]];
    const limitsOf = gate.definition.poolOf ?? queue;
    for (const name of this.tiers.tierNames()) {
      const tier = this.tiers.tier(name)!;
      const own = tier.queues && Object.hasOwn(tier.queues, limitsOf) ? tier.queues[limitsOf] : {};
      const floor = own.minConcurrency ?? tier.minConcurrency;
      if (floor !== undefined) single.push([`tier "${name}"`, floor]);
    }
    for (const [where, floor] of single) {
      if (floor > slots) {
        this.logger.warn(
          `${tenantLogFields()} ${Messages.floorsOverSlots(queue, `one tenant's floor from ${where}`, floor, slots)}`,
        );
      }
    }
  }

  /** A tier or directory change, applied now to every fair queue of this app (all processes). */
  private async refreshHints(tenantId: string): Promise<void> {
    for (const gate of this.gates.values()) {
      this.hintSent.delete(`${gate.definition.name}\u0000${tenantId}`);
      await this.ensureHints(gate, tenantId);
    }
  }
}

const MAX_HINTS_SENT = 100_000;
/** How often a process checks that Redis still holds the hints epoch (ms). */
const EPOCH_CHECK_MS = 1000;
const HINT_SWEEP = 100;
/** Added to `tierCacheMs` + `enqueueTimeoutMs` for the life of an idle tenant's hints (ms). */
const HINT_KEEP_MARGIN_MS = 1000;

/** A tenant's limits as the gate stores them (see `FairHint`). */
function toHint(limits: TenantLimits): FairHint {
  const { weight, maxConcurrency: cap, minConcurrency: floor, rateLimit, lanes } = limits;
  return [
    typeof weight === 'number' && weight > 0 ? weight : false,
    typeof cap === 'number' && cap >= 0 ? Math.floor(cap) : false,
    rateLimit === undefined ? false : encodeRate(rateLimit),
    lanes && Object.keys(lanes).length ? JSON.stringify(lanes) : false,
    typeof floor === 'number' && floor >= 0 ? Math.floor(floor) : false,
  ];
}
