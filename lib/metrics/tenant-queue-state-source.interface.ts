/**
 * Live per-tenant state of a queue, as a fair gate knows it.
 * @publicApi
 */
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
 * @publicApi
 */
export interface TenantQueueStateSource {
  handles(queue: string): boolean;
  /** What the source knows; fields it leaves out come from the inspector's own counters. */
  getTenant(queue: string, tenantId: string): Promise<Partial<TenantQueueLiveState>>;
}

export const TenantQueueStateSource = Symbol('TenantQueueStateSource');

/**
 * Pause and resume one tenant on one queue (the dashboard's buttons call these).
 * @publicApi
 */
export interface TenantQueueControls {
  pause(queue: string, tenantId: string): Promise<void>;
  resume(queue: string, tenantId: string): Promise<void>;
}

export const TenantQueueControls = Symbol('TenantQueueControls');
