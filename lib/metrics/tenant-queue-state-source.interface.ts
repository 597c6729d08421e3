import { JobGatePlace, JobHold } from './job-explanation.interface';

/** Live per-tenant state of a queue, as a fair gate knows it. */
export interface TenantQueueLiveState {
  /** Jobs waiting (in the gate and in BullMQ); when left out, `gated` plus BullMQ's count. */
  backlog: number;
  /** Jobs waiting in the gate itself, not yet handed to BullMQ (the inspector adds BullMQ's). */
  gated: number;
  /** Jobs started and not finished; when left out, counted in BullMQ's active and retry lists. */
  inFlight: number;
  paused: boolean;
  slowLane: boolean;
  /** Held back by its rate limit right now (its next job is not due yet). */
  rateLimited: boolean;
}

/**
 * Where `TenantQueueInspector` reads backlog, in-flight, paused and slow-lane state for queues
 * that have a fair gate. Queues it does not handle use the inspector's own counters.
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
}

/** A fair gate's answer for one job (see `TenantQueueStateSource.explainJob`). */
export type GateJobAnswer =
  | { state: 'gate'; tenantId: string; place: JobGatePlace; holds: JobHold[] }
  | { state: 'admitted'; tenantId: string };

export const TenantQueueStateSource = Symbol('TenantQueueStateSource');

/** Pause and resume one tenant on one queue (the dashboard's buttons call these). */
export interface TenantQueueControls {
  pause(queue: string, tenantId: string): Promise<void>;
  resume(queue: string, tenantId: string): Promise<void>;
}

export const TenantQueueControls = Symbol('TenantQueueControls');
