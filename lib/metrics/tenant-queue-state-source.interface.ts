import type { TenantRateLimit } from '../core/types/tenant-tier-options.interface';
import { JobGatePlace, JobHold } from './job-explanation.interface';

/**
 * Live per-tenant state of a queue, as a fair gate knows it.
 * @publicApi
 */
export interface TenantQueueLiveState {
  /** Jobs waiting (in the gate and in BullMQ); when left out, `gated` plus BullMQ's count. */
  backlog: number;
  /** Jobs waiting in the gate itself, not yet handed to BullMQ (the inspector adds BullMQ's). */
  gated: number;
  /**
   * When (ms) the oldest job counted in `gated` was enqueued, `null` when none waits: the
   * inspector's `oldestWaitingMs` for those jobs (else estimated from the enqueue counts).
   */
  gatedSince: number | null;
  /** Jobs started and not finished; when left out, counted in BullMQ's active and retry lists. */
  inFlight: number;
  paused: boolean;
  /** While paused: when it was paused (ms). */
  pausedAt: number | null;
  slowLane: boolean;
  /** Held back by its rate limit right now (its next job is not due yet). */
  rateLimited: boolean;
  /** While rate limited: when its next job may start (ms). */
  rateLimitedUntil: number | null;
}

/**
 * Where `TenantQueueInspector` reads backlog, in-flight, paused and slow-lane state for queues
 * that have a fair gate. Queues it does not handle use the inspector's own counters.
 * @publicApi
 */
export interface TenantQueueStateSource {
  handles(queue: string): boolean;
  /** What the source knows; fields it leaves out come from the inspector's own counters. */
  getTenant(queue: string, tenantId: string): Promise<Partial<TenantQueueLiveState>>;
  /**
   * Where a job stands in the gate: its place and what holds it while it waits there, `admitted`
   * once the gate handed it to BullMQ, `undefined` when the gate does not hold it.
   */
  explainJob?(queue: string, jobId: string): Promise<GateJobAnswer | undefined>;
  /**
   * `gated` of many tenants at once, in `tenantIds`' order: the metrics gauges read every tenant
   * of a queue this way, a page at a time. A source without it is read one tenant at a time.
   */
  gatedCounts?(queue: string, tenantIds: string[]): Promise<number[]>;
  /**
   * Whether `gated` also counts the queue's jobs waiting their turn in BullMQ's prioritized set
   * (even priorities, the fair gate's priority by turn): the inspector's own count of BullMQ's
   * jobs then leaves them out.
   */
  countsTurns?(queue: string): boolean;
  /**
   * Up to `limit` tenants whose jobs the gate holds (paused, at their cap, rate limited...), the
   * longest held first: `listTenants` lists them beside the most recently active, as nothing
   * happens for such a tenant while it waits.
   */
  heldTenants?(queue: string, limit: number): Promise<string[]>;
  /** Up to `limit` jobs waiting in the gate for one tenant, next first (its lanes in order). */
  gateJobs?(queue: string, tenantId: string, limit: number): Promise<GateJob[]>;
}

/** A job waiting in a fair gate, as `TenantQueueStateSource.gateJobs` lists it. */
export interface GateJob {
  id: string;
  lane: string;
  name: string;
  data: unknown;
  opts: Record<string, unknown>;
}

/**
 * A fair gate's answer for one job (see `TenantQueueStateSource.explainJob`).
 * @publicApi
 */
export type GateJobAnswer =
  | { state: 'gate'; tenantId: string; place: JobGatePlace; holds: JobHold[] }
  | { state: 'admitted'; tenantId: string };

export const TenantQueueStateSource = Symbol('TenantQueueStateSource');

/**
 * Pause and resume one tenant on one queue (the dashboard's buttons call these).
 * @publicApi
 */
export interface TenantQueueControls {
  pause(queue: string, tenantId: string): Promise<void>;
  resume(queue: string, tenantId: string): Promise<void>;
  /** The settings a tenant runs with on a queue; undefined where the queue has none to edit. */
  settings?(queue: string, tenantId: string): Promise<TenantQueueSettings | undefined>;
  /** Changes some settings (`null` goes back to the default); a typed error for bad values. */
  configure?(queue: string, tenantId: string, change: TenantQueueSettingsChange): Promise<void>;
}

/** What the dashboard shows and edits of a tenant on a fair queue. */
export interface TenantQueueSettings {
  weight: number;
  /** Concurrency cap (0 = none). */
  concurrency: number;
  rateLimit: TenantRateLimit | false;
  paused: boolean;
  slowLane: boolean;
}

/** Fields left out stay as they are; `null` clears the run-time override. */
export interface TenantQueueSettingsChange {
  weight?: number | null;
  concurrency?: number | null;
  rateLimit?: TenantRateLimit | false | null;
}

export const TenantQueueControls = Symbol('TenantQueueControls');
