import type { TenantRateLimit } from '../core/types/tenant-tier-options.interface';

/**
 * Slow lane: a tenant whose jobs keep failing gets a smaller share until it recovers.
 * @publicApi
 */
export interface TenantSlowLaneOptions {
  /**
   * Final failures (not cancellations) within `windowMs` that put a tenant in the slow lane.
   * `0` turns the slow lane off.
   * @default 20
   */
  failureThreshold?: number;
  /**
   * Length of the sliding failure window, in milliseconds.
   * @default 60000
   */
  windowMs?: number;
  /**
   * Share of its normal weight a tenant keeps in the slow lane (`0.1` = one turn in ten).
   * @default 0.1
   */
  share?: number;
  /**
   * The tenant leaves the slow lane when its failures within the window drop to this many.
   * @default Math.floor(failureThreshold / 2)
   */
  recoverAt?: number;
}

/** One lane of a fair queue (`fairness.lanes`). */
export interface TenantLaneOptions {
  /**
   * Share of the queue's worker slots (all live workers' concurrency) kept for this lane while it
   * has work, 0-1; the shares of all lanes add up to at most 1. A lane below its share is admitted
   * at once and runs next; capacity a lane does not use goes to the earlier lanes first.
   */
  share: number;
  /** Job names that go to this lane unless the job's own `lane` option says otherwise. */
  jobs?: string[];
}

/**
 * Fair share across tenants for one queue (`registerQueue({ name, fairness })`). Each job takes
 * its tenant's turn, as a BullMQ priority at `add()` (`priorityByTurn`) or, while a rule holds
 * its tenant (a pause, a cap, a rate limit), from a per-tenant backlog in Redis that admits it
 * into BullMQ in turns, so one tenant's flood no longer decides how long another tenant waits.
 * Holds across every process and machine.
 * @publicApi
 */
export interface TenantFairnessOptions {
  /**
   * Turns fairness on for the queue.
   * @default true
   */
  enabled?: boolean;
  /**
   * Weight of a tenant with none of its own (from `TenantDirectory` or `TenantFairness.setWeight`).
   * A tenant of weight 3 gets three turns for each turn of a tenant of weight 1.
   * @default 1
   */
  defaultWeight?: number;
  /**
   * At most this many jobs of one tenant are admitted in a row while another tenant waits. With
   * turns taken at `add()` (`priorityByTurn`) a tenant has at most this many jobs a turn level
   * (the end of one level and the start of the next can still run up to twice that in a row),
   * except a small tenant that wakes up (no more jobs than the workers' slots): its few jobs
   * run at once.
   * Keep it at least the largest weight ratio you use, or it caps that ratio. It counts jobs in both
   * `share` modes; with `share: 'time'` it also caps the ratio of run times honoured (a tenant
   * of 2 ms jobs beside one of 2 s jobs needs 1,000 in a row), hence its larger default there.
   * @default 5 (1000 with `share: 'time'`)
   */
  maxConsecutive?: number;
  /**
   * Most jobs of one tenant admitted into BullMQ at once (waiting or running), across all
   * workers and machines; `0` means no cap. A tenant's own `maxConcurrency` (directory) or
   * `TenantFairness.setConcurrency` wins over it.
   * @default 0
   */
  defaultConcurrency?: number;
  /**
   * Guaranteed floor of every tenant: the slots it keeps whenever it has work, even under other
   * tenants' floods, while its cap stays the burst ceiling. Its jobs are admitted out of turn
   * (beyond a full window if need be) and run next, ahead of jobs admitted before them. A
   * tenant's own `minConcurrency` (tier, directory) or `TenantFairness.setMinConcurrency` wins
   * over it. Keep the floors of the tenants busy at once within the workers' total concurrency
   * (a warning says when the known floors exceed it, and when the floors of the tenants with work
   * want more than the gate admits beyond its window: twice the workers' slots). `0` means no
   * floor.
   * @default 0
   */
  defaultMinConcurrency?: number;
  /**
   * Most jobs one tenant may have waiting in the gate; beyond it `add`/`addBulk` throw
   * `TenantBacklogFullError` and write nothing. `0` means no limit.
   * @default 0
   */
  maxBacklog?: number;
  /**
   * Jobs admitted into BullMQ at once, all tenants together. By default it follows the workers:
   * `windowPerSlot` times the total concurrency of the live workers of the queue (at least
   * `minWindow`). A small window keeps waits short; too small a window starves the workers.
   */
  window?: number;
  /** @default 4 */
  windowPerSlot?: number;
  /** @default 16 */
  minWindow?: number;
  /**
   * The longest between two checks of an admitted job in BullMQ by the tick (a running or
   * waiting job keeps its slot; a finished or vanished one gives it back, whoever ran it). The
   * tick checks each job every `max(1000, tickMs)` ms, at most every `leaseMs`.
   * @default 30000
   */
  leaseMs?: number;
  /**
   * Period of each process's upkeep tick (lost signals, slots of jobs that ended without a
   * release, jobs other clients set running), in ms.
   * @default 1000
   */
  tickMs?: number;
  /**
   * @deprecated Nothing is re-sent since a job is written once, into BullMQ, at `add()`: the
   * option is accepted (and checked) for existing configurations and has no effect.
   * @default 30000
   */
  resendAfterMs?: number;
  /**
   * Most jobs one script call admits.
   * @default 200
   */
  dispatchBatch?: number;
  /**
   * Turns as BullMQ priorities, taken at `add()`. On (the default, on a queue without lanes,
   * fair keys, `share: 'time'`, a budget or `maxBacklog`): a job whose tenant no rule holds (not
   * paused, no cap, rate limit or floor, nothing waiting in the gate) skips the gate, into
   * BullMQ's prioritized set at its tenant's turn level (a tenant of weight 3 has three jobs a
   * level, one that wakes up starts at the level BullMQ serves now, all its jobs there when they
   * are few: no more than `maxConsecutive` or the workers' slots), so BullMQ's own fetch serves the tenants in turn with no admission or release work
   * per job; the gate holds only jobs a rule holds, and admits them at their turn levels. A pause,
   * a cap, a rate limit or a floor takes the tenant's queued jobs back into the gate. `false`:
   * every job waits in the gate and is admitted in turns into BullMQ's wait list (a light
   * tenant's at its head). `true` on a queue that cannot take turns at add: admitted jobs carry
   * the tenant's count in flight as their priority. A job's own `priority` (or `lifo`) goes
   * through the gate and keeps it; lanes use their own priorities, so `true` with two lanes or
   * more is refused at `registerQueue` (`InvalidTenantQueueOptionsError`).
   * @default true where the queue allows it (see above), else false
   */
  priorityByTurn?: boolean;
  /**
   * What a turn costs. `'jobs'`: one job, so equal weights give equal job counts. `'time'`: the
   * job's expected run time (a moving average per tenant and job name, measured by the workers
   * and corrected when each job ends), so equal weights give equal shares of the workers' time:
   * a tenant of 2 s jobs and one of 2 ms jobs, both backlogged, get about half each. Every
   * attempt is charged the time it ran, failed attempts that retry too. Caps, rate limits and
   * `maxConsecutive` still count jobs. Set it the same in every process.
   * @default 'jobs'
   */
  share?: 'jobs' | 'time';
  /**
   * Jobs of one tenant started per interval, with a burst (`{ max: 20, per: 60_000 }`), across
   * every process. A tenant's tier, its directory record or `TenantFairness.setRateLimit`
   * override it. A limited tenant's jobs wait in its backlog; other tenants go on.
   * @default undefined (no limit)
   */
  rateLimit?: TenantRateLimit;
  /**
   * Lanes in priority order (`{ interactive: { share: 0.7 }, bulk: { share: 0.3, jobs: ['export'] } }`).
   * Each lane keeps its share of the window while it has work; spare capacity goes to the
   * earlier lanes first, so interactive jobs do not wait behind bulk work beyond bulk's share.
   * Fair turns across tenants hold inside each lane. A job picks its lane with the `lane` job
   * option, or by its name (`jobs`), else `defaultLane`.
   */
  lanes?: Record<string, TenantLaneOptions>;
  /**
   * Lane of a job that names none. Must be one of `lanes`.
   * @default the first lane declared
   */
  defaultLane?: string;
  /**
   * Fairness inside a tenant: a second key (a user, a project) whose turns go round within the
   * tenant's own turn, so one user's 10,000 jobs do not starve the same tenant's other users.
   * `'job'`: a job names its key with the `fairKey` job option; `'actor'`: the same, and a job that
   * names none takes its envelope's actor id. Jobs with no key share one turn of their own. Keys
   * have equal weights; a tenant's share against other tenants stays its weight however many keys
   * it uses. Unset: the `fairKey` job option is refused.
   * @default undefined (no fair keys)
   */
  fairKey?: 'job' | 'actor';
  /** Slow lane for failing tenants. `false` turns it off. */
  slowLane?: TenantSlowLaneOptions | false;
}
