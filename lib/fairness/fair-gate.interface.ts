import { SYSTEM_BUCKET } from '../tenant-queue.constants';

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

/**
 * Where a gated job waits: BullMQ's own `delayed` set, due at this time (2^41 - 1 ms,
 * 2039-09-07), so BullMQ's score (timestamp + delay) * 0x1000 + counter stays exact in a double
 * and no promotion reaches it; the gate moves it to the wait list at its turn (fair-bull.lua).
 */
export const HOLD_UNTIL_MS = 2 ** 41 - 1;

/**
 * Priority by turn: the BullMQ priority a job that may skip the gate is added at (above every
 * turn level), in the MULTI whose enqueue call then gives it its turn level or takes it into the
 * hold (fair-turns.lua): no worker sees it at this priority.
 */
export const TURN_PLACEHOLDER = 2 ** 21 - 1;

/**
 * An admitting script's reply: events, the ids it admitted, wake ms, with a budget the queues it
 * woke (else false or absent); an admin call's adds 1 while the tenant's recall is unfinished.
 */
export type GateReply = [
  (string | number)[],
  string[],
  number | string,
  (string[] | false)?,
  number?,
];
