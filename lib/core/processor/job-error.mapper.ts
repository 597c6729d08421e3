import { ForbiddenException, Logger } from '@nestjs/common';
import { FORBIDDEN_MESSAGE } from '@nestjs/core/guards/constants';
import { Job, UnrecoverableError } from 'bullmq';
import { jobLogRef, tenantLogFields } from '../context/tenant-log-fields';
import {
  CancelReason,
  JobCancelledError,
  JobTimeoutError,
  NonErrorThrownError,
  NonRetryableError,
  TIMEOUT_REASON_PREFIX,
  formatCancelledReason,
  parseCancelReason,
} from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { TenantBullJob } from './tenant-bull-job';

/**
 * What BullMQ gets for what a job threw: a cancellation (a job guard's or a Nest guard's denial,
 * a bad envelope) or a `NonRetryableError` becomes `UnrecoverableError` with the reason, so it is
 * never retried; a thrown non-Error becomes `NonErrorThrownError`; any other error is retried.
 */
export function toBullError(error: unknown, job: Job, logger: Logger): unknown {
  if (error instanceof JobCancelledError)
    return cancelled(error.reason, error.message, job, logger);
  // What ExternalContextCreator throws when a Nest guard on the processor returns false. Only
  // that one: a ForbiddenException of the handler's (or a guard's own) is an error like any other.
  if (error instanceof ForbiddenException && error.message === FORBIDDEN_MESSAGE) {
    return cancelled('FORBIDDEN', Messages.jobForbidden(error.message), job, logger);
  }
  if (error instanceof NonRetryableError) {
    const { message } = error;
    const unrecoverable = new UnrecoverableError(
      disguised(message) ?? (isBlank(message) ? Messages.emptyErrorMessage(error.name) : message),
    );
    unrecoverable.stack = error.stack;
    (unrecoverable as { cause?: unknown }).cause = error;
    return unrecoverable;
  }
  if (!(error instanceof Error)) {
    return new NonErrorThrownError(error, Messages.nonErrorThrown(describeThrown(error)));
  }
  const unreadable = unreadableField(error);
  if (unreadable) return new NonErrorThrownError(error, Messages.unreadableErrorThrown(unreadable));
  if (BULL_MOVED_NAMES.has(error.name) && job instanceof TenantBullJob && !job.moved) {
    return renamed(error, Messages.bullMovedNameThrown(error.name, error.message));
  }
  // Only a JobCancelledError cancels, and only the module's own timeout is one: a message that
  // merely starts like either would be read back as such (a cancellation: no dead letter). An
  // empty message would leave the failed job, and its dead letter, without any reason.
  const reworded =
    error instanceof JobTimeoutError
      ? undefined
      : (disguised(error.message) ??
        // BullMQ's own "moved" errors carry no message by design: they are no failure.
        (isBlank(error.message) && !BULL_MOVED_NAMES.has(error.name)
          ? Messages.emptyErrorMessage(error.name)
          : undefined));
  if (reworded !== undefined) {
    const wrapped = renamed(error, reworded);
    wrapped.name = error.name; // its retry policy
    return wrapped;
  }
  return error;
}

/**
 * A handler's message that reads as the module's own reason (a cancellation, a timeout) or as
 * BullMQ's stall, said to be the handler's; undefined for any other message.
 */
function disguised(message: string): string | undefined {
  if (parseCancelReason(message)) return Messages.cancelLookalike(message);
  if (message.startsWith(TIMEOUT_REASON_PREFIX) || message === STALLED_REASON) {
    return Messages.reasonLookalike(message);
  }
  return undefined;
}

function isBlank(message: string): boolean {
  return message.trim() === '';
}

/**
 * The names BullMQ takes to mean the handler moved its job itself (`job.moveToDelayed`,
 * `moveToWait`, `moveToWaitingChildren`), leaving it where it is.
 */
const BULL_MOVED_NAMES = new Set(['DelayedError', 'WaitingError', 'WaitingChildrenError']);

/** A plain `Error` with `message`, the stack of `error` and `error` as its cause. */
function renamed(error: Error, message: string): Error {
  const wrapped = new Error(message);
  wrapped.stack = error.stack;
  (wrapped as { cause?: unknown }).cause = error;
  return wrapped;
}

/**
 * BullMQ reads an error's `message`, `name` and `stack` to fail the attempt: one whose getter
 * throws there (or a message that is not a string) would leave the job active until the stalled
 * check. Says which field and why, or undefined when all three can be read.
 */
function unreadableField(error: Error): string | undefined {
  let field = 'message';
  try {
    if (typeof error.message !== 'string')
      return `its message is not a string (${typeof error.message})`;
    field = 'name';
    void error.name;
    field = 'stack';
    void error.stack;
    return undefined;
  } catch (thrown) {
    let why: string;
    try {
      why = thrown instanceof Error ? String(thrown.message).slice(0, 200) : typeof thrown;
    } catch {
      why = typeof thrown;
    }
    return `reading its ${field} threw: ${why}`;
  }
}

function cancelled(
  reason: CancelReason,
  message: string,
  job: Job,
  logger: Logger,
): UnrecoverableError {
  // A refused envelope's tenant id is unverified (forged, altered): no tenant's line names it.
  const ref = reason === 'INVALID_ENVELOPE' ? { jobId: job.id } : jobLogRef(job);
  logger.warn(
    `${tenantLogFields(ref)} job ${job.id} (${job.queueName}/${job.name}) cancelled: ${reason}`,
  );
  const error = new UnrecoverableError(formatCancelledReason(reason, message));
  (error as { cause?: unknown }).cause = reason;
  return error;
}

function describeThrown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 200));
  if (value === null || value === undefined) return String(value);
  // JSON has no symbol (nor function): their own text names them.
  if (typeof value === 'symbol' || typeof value === 'function') {
    return `${typeof value} ${String(value).slice(0, 200)}`;
  }
  try {
    return `${typeof value} ${JSON.stringify(value)?.slice(0, 200)}`;
  } catch {
    return typeof value;
  }
}

/** Why a job failed for good (a dead letter's `reason`, the dead-lettered metric's). */
export type FinalFailureReason = 'TIMEOUT' | 'STALLED' | 'NON_RETRYABLE' | 'ATTEMPTS_EXHAUSTED';

/**
 * Why `job` failed for good. `NON_RETRYABLE`: attempts were left, or it threw BullMQ's
 * `UnrecoverableError` (which a `NonRetryableError` becomes) on its last one, read from the
 * error where the caller has it, else from the job's last stack trace.
 */
export function finalFailureReason(job: Job, error?: unknown): FinalFailureReason {
  const failedReason = job.failedReason ?? (error as Error | undefined)?.message ?? '';
  if (failedReason.startsWith(TIMEOUT_REASON_PREFIX)) return 'TIMEOUT';
  if (failedReason === STALLED_REASON) return 'STALLED';
  if (job.attemptsMade < (job.opts.attempts ?? 1)) return 'NON_RETRYABLE';
  if (error instanceof UnrecoverableError || (error as Error | undefined)?.name === UNRECOVERABLE) {
    return 'NON_RETRYABLE';
  }
  const stack = job.stacktrace?.[job.stacktrace.length - 1];
  return typeof stack === 'string' && UNRECOVERABLE_STACK.test(stack)
    ? 'NON_RETRYABLE'
    : 'ATTEMPTS_EXHAUSTED';
}

/** BullMQ's reason for a job that stalled more often than `maxStalledCount` allows. */
const STALLED_REASON = 'job stalled more than allowable limit';
const UNRECOVERABLE = 'UnrecoverableError';
/** The first line of such an error's stack (a `NonRetryableError` keeps its own stack). */
const UNRECOVERABLE_STACK = /^(UnrecoverableError|NonRetryableError)\b/;
