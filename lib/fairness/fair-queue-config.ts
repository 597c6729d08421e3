import { SYSTEM_BUCKET } from '../tenant-queue.constants';
import { BULLMQ_MAJOR } from '../core/bullmq';
import type { PreparedJob, TenantJobOptions } from '../core/queues/job-dispatcher.interface';
import type { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { ResolvedFairnessOptions, resolvedFairnessOf } from './fairness-options';
import { FAIR_MODES } from './modes';
import { withFairKey } from './modes/fair-keys/fair-key';
import { slowLaneArg } from './modes/slow-lane/slow-lane.mode';
import { budgetBaseOf } from './modes/budget/budget';

/**
 * How often the gate checks what BullMQ holds of each admitted job (fair-tick.lua): a slot whose
 * job ended without a release (a plain BullMQ worker, a process that died) is free within this,
 * at most `leaseMs`.
 */
function checkEveryMs(options: ResolvedFairnessOptions): number {
  return Math.min(options.leaseMs, Math.max(1000, options.tickMs));
}

/**
 * What one fair queue's gate runs with, resolved once when the gate is made: its keys, the
 * config its scripts read (fair-keys.lua lists the fields; the core's here, each mode's from
 * `FAIR_MODES`), and where each job goes (its lane, its fair key). The gate, the explain and the job listing read the same copy.
 */
export class FairQueueConfig {
  /** The gate's base key, in the queue's hash slot. */
  readonly base: string;
  /** BullMQ's key prefix of the queue, `<prefix>:<queue>:`. */
  readonly jobPrefix: string;
  /** The scripts' config (JSON). */
  readonly script: string;
  /** The slow lane's config (JSON): threshold, window, recoverAt. */
  readonly slowLane: string;
  /** `share: 'time'`: a release carries the job's run time. */
  readonly timeShare: boolean;
  /** The gate gives admitted jobs BullMQ priorities (lanes, priority by turn). */
  readonly prioritized: boolean;
  /**
   * Priority by turn without lanes, fair keys, time share, a budget or a backlog limit: a job
   * whose tenant no rule holds skips the gate, into BullMQ's prioritized set at its turn
   * (fair-turns.lua).
   */
  readonly turnsAtAdd: boolean;
  /** How many lanes the queue declares (0: none, one unnamed lane). */
  private readonly laneCount: number;
  private readonly laneOfJob = new Map<string, string>();

  constructor(
    readonly definition: TenantQueueDefinition,
    readonly options: ResolvedFairnessOptions,
    budgetBase?: string,
  ) {
    this.base = `${definition.bullPrefix}:~fair`;
    this.jobPrefix = `${definition.bullPrefix}:${definition.name}:`;
    this.timeShare = options.share === 'time';
    this.laneCount = options.lanes.length;
    this.turnsAtAdd =
      options.turnsAtAdd &&
      options.lanes.length < 2 &&
      !options.fairKey &&
      !this.timeShare &&
      !budgetBase &&
      options.maxBacklog === 0;
    const byTurn = (options.priorityByTurn || this.turnsAtAdd) && options.lanes.length < 2;
    this.prioritized = options.lanes.length > 1 || byTurn;
    for (const lane of options.lanes) {
      for (const job of lane.jobs) this.laneOfJob.set(job, lane.name);
    }
    const context = { queue: definition.name, budgetBase };
    this.script = JSON.stringify(
      Object.assign(
        {
          jp: this.jobPrefix,
          chk: checkEveryMs(options),
          sys: SYSTEM_BUCKET,
          ...(BULLMQ_MAJOR < 6 ? { pl: true } : {}),
          ...(this.prioritized ? { pr: true } : {}),
          tp: byTurn,
          ...(this.turnsAtAdd ? { dt: true } : {}),
          dw: options.defaultWeight,
          dcap: options.defaultConcurrency,
          k: options.maxConsecutive,
          win: options.window,
          minWin: options.minWindow,
          lease: options.leaseMs,
        },
        ...FAIR_MODES.map((mode) => mode.script(options, context)),
      ),
    );
    this.slowLane = slowLaneArg(options);
  }

  /** Whether the queue has two lanes or more (their priorities win over a job's own). */
  get lanes(): boolean {
    return this.laneCount > 1;
  }

  /**
   * The job's place as the enqueue script takes it (its lane, with its fair key where the queue
   * has them) and its options for BullMQ without `fairKey` (the envelope carries it, signed).
   */
  placeOf(job: PreparedJob): [string, object] {
    const keys = this.options.fairKey;
    return keys ? withFairKey(this.laneOf(job), job, keys === 'actor') : this.laneOf(job);
  }

  /**
   * The job's lane (its `lane` option, else its name's lane, else the default) and its options
   * for BullMQ. A `lane` the caller asked for stays in them, so BullMQ's clients show it and a
   * dead letter's replay takes the job back to its lane. The gate gives admitted jobs their
   * BullMQ priority (see dispatch in fair-dispatch.lua); a delayed job, which skips the gate,
   * runs as work beyond its lane's share.
   */
  laneOf(job: PreparedJob): [string, object] {
    // None or one lane: the gate runs the queue as one without lanes (lanesMode.script).
    if (this.laneCount <= 1) return ['', job.opts];
    const asked = (job.opts as TenantJobOptions).lane;
    return [asked ?? this.laneOfJob.get(job.name) ?? this.options.defaultLane, job.opts];
  }
}

const configs = new WeakMap<TenantQueueDefinition, FairQueueConfig | null>();

/**
 * The `FairQueueConfig` of a queue (or pool) definition, made once from the options resolved at
 * `registerQueue`: the producer's job checks, the gate and the registry read this one copy.
 * `undefined`: not a fair queue.
 */
export function fairConfigOf(definition: TenantQueueDefinition): FairQueueConfig | undefined {
  let config = configs.get(definition);
  if (config === undefined) {
    const options = resolvedFairnessOf(definition.registered);
    config = options ? new FairQueueConfig(definition, options, budgetBaseOf(definition)) : null;
    configs.set(definition, config);
  }
  return config ?? undefined;
}
