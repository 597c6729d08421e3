import { TenantQueueError } from './tenant-queue.error';

/**
 * Why a job was cancelled rather than run. Cancelled jobs are never retried.
 * @publicApi
 */
export type CancelReason =
  | 'MISSING_TENANT'
  | 'INVALID_ENVELOPE'
  | 'TENANT_UNKNOWN'
  | 'TENANT_SUSPENDED'
  | 'TENANT_DELETED'
  | 'NOT_ENTITLED'
  | 'ACTOR_NOT_PERMITTED'
  /** A Nest guard on the processor (`@UseJobGuards`, or a global one) returned false. */
  | 'FORBIDDEN';

/**
 * Thrown (by the module's job guards, or by yours) to cancel a job: it fails at once without
 * retry, and its `failedReason` starts with `[cancelled:<reason>]`.
 * @publicApi
 */
export class JobCancelledError extends TenantQueueError {
  constructor(
    readonly reason: CancelReason,
    message: string,
  ) {
    super(message);
  }
}

const CANCELLED_PATTERN = /^\[cancelled:([A-Z_]+)\] /;

export function formatCancelledReason(reason: CancelReason, message: string): string {
  return `[cancelled:${reason}] ${message}`;
}

/**
 * Reads the cancel reason back out of a BullMQ `failedReason`, or undefined for other failures.
 * @publicApi
 */
export function parseCancelReason(failedReason: string | undefined): CancelReason | undefined {
  const match = failedReason ? CANCELLED_PATTERN.exec(failedReason) : null;
  return match ? (match[1] as CancelReason) : undefined;
}
