import { Messages } from '../../tenant-queue.messages';
import { TenantQueueError } from './tenant-queue.error';

/**
 * Why a job was cancelled rather than run: one of the module's reasons, or your own (1-64
 * letters, digits, `_`, `-` or `.`, e.g. `'OVER_QUOTA'`). Cancelled jobs are never retried.
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
  | 'FORBIDDEN'
  // Your own reasons (the `& {}` keeps the module's names offered by editors).
  | (string & {});

/** What a cancel reason may be (it is read back out of the job's `failedReason`). */
const REASON = '[A-Za-z0-9_.-]{1,64}';
const CANCEL_REASON = new RegExp(`^${REASON}$`);

/**
 * Thrown (by the module's job guards, or by yours) to cancel a job: it fails at once without
 * retry, and its `failedReason` starts with `[cancelled:<reason>]`. A reason outside 1-64
 * letters, digits, `_`, `-` or `.` throws a `TypeError` here instead (the attempt then fails
 * with that message, as any other error would).
 * @publicApi
 */
export class JobCancelledError extends TenantQueueError {
  constructor(
    readonly reason: CancelReason,
    message: string,
  ) {
    super(message);
    if (typeof reason !== 'string' || !CANCEL_REASON.test(reason)) {
      throw new TypeError(Messages.badCancelReason(reason));
    }
  }
}

const CANCELLED_PATTERN = new RegExp(`^\\[cancelled:(${REASON})\\] `);

export function formatCancelledReason(reason: CancelReason, message: string): string {
  return `[cancelled:${reason}] ${message}`;
}

/** @internal A cancelled job's `failedReason` without its `[cancelled:<reason>] ` prefix. */
export function cancelMessage(failedReason: string): string {
  const match = CANCELLED_PATTERN.exec(failedReason);
  return match ? failedReason.slice(match[0].length) : failedReason;
}

/**
 * Reads the cancel reason back out of a BullMQ `failedReason`, or undefined for other failures.
 * @publicApi
 */
export function parseCancelReason(failedReason: string | undefined): CancelReason | undefined {
  const match = failedReason ? CANCELLED_PATTERN.exec(failedReason) : null;
  return match ? (match[1] as CancelReason) : undefined;
}
