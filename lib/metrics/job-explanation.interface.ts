/**
 * Where a job is, as `TenantQueueInspector.explain` finds it.
 * @publicApi
 */
export type ExplainedJobState =
  /** Waiting in the fair gate: its tenant's backlog, not yet admitted into BullMQ. */
  | 'gate'
  /** Admitted by the gate and on its way into BullMQ (BullMQ does not list it yet). */
  | 'admitted'
  | 'waiting'
  | 'prioritized'
  | 'waiting-children'
  | 'active'
  | 'delayed'
  | 'completed'
  | 'failed'
  /** Neither the gate nor BullMQ knows the id (never enqueued, or removed after it ended). */
  | 'unknown';

/**
 * What keeps a waiting job from starting, most decisive first in `JobExplanation.holds`.
 * @publicApi
 */
export type JobHold =
  /** Its tenant is paused on this queue (`TenantFairness.pause`). */
  | 'paused'
  /** Its tenant has as many jobs in flight as its concurrency cap. */
  | 'concurrency-cap'
  /** Its tenant's rate limit lets the next job start at `gate.rateLimitedUntil`. */
  | 'rate-limit'
  /** Another lane is served first, or its lane has used its share of the worker slots. */
  | 'lane-share'
  /** The gate admitted as many jobs as its window holds; it admits more as those finish. */
  | 'window-full'
  /** Its tenant is in the slow lane: served at a share of its weight. */
  | 'slow-lane'
  /** Other tenants come first in the turn order (`gate.turnPosition` of them). */
  | 'turn'
  /** Earlier jobs of its own tenant come first (`gate.backlogPosition` of them). */
  | 'backlog'
  /** In BullMQ, and no worker consumes the queue in any process. */
  | 'no-consumer'
  /** In BullMQ, waiting for a free worker slot. */
  | 'workers-busy'
  /** A delayed job, due at `delayedUntil`. */
  | 'delay';

/**
 * A job's place in the fair gate (only while it waits there).
 * @publicApi
 */
export interface JobGatePlace {
  /** Its lane ('' on a queue without lanes). */
  lane: string;
  /** Jobs of the same tenant (and lane) ahead of it: 0 = it is the next one. */
  backlogPosition: number;
  /** Jobs in its tenant's backlog (in its lane). */
  backlogLength: number;
  /** Tenants ahead of its tenant in the turn order (0 = next); null while it is out of turn. */
  turnPosition: number | null;
  /** Tenants in turn in its lane. */
  tenantsInTurn: number;
  weight: number;
  /** Concurrency cap in use (0 = none). */
  concurrency: number;
  /** Its tenant's jobs admitted and not finished. */
  inFlight: number;
  paused: boolean;
  slowLane: boolean;
  /** When (Redis clock, ms) its tenant's rate limit lets the next job start; null when none holds. */
  rateLimitedUntil: number | null;
  /** Jobs the gate admits at most at once (its window), and how many it holds admitted now. */
  window: number;
  admitted: number;
}

/**
 * "Why is this job still waiting?": `TenantQueueInspector.explain(queue, jobId)`.
 * @publicApi
 */
export interface JobExplanation {
  /** The queue, or the pool of it, that holds the job (the queue asked for when unknown). */
  queue: string;
  jobId: string;
  state: ExplainedJobState;
  /** From the gate or the job's envelope; null when neither says. */
  tenantId: string | null;
  /** What holds the job back, most decisive first; empty when nothing does (or it is not waiting). */
  holds: JobHold[];
  /** The answer in one sentence. */
  summary: string;
  /** Its place in the fair gate, while it waits there. */
  gate: JobGatePlace | null;
  /** A delayed job's due time (ms). */
  delayedUntil: number | null;
  /**
   * Workers consuming its queue in all processes (BullMQ's `getWorkers`); null while it waits in
   * the fair gate (`state: 'gate'`, not read there) or when Redis refuses CLIENT LIST.
   */
  workers: number | null;
}
