import type { DeadLetter } from '../lib';

/**
 * An absolute server path (`/srv/app/dist/x.js`, `file:///...`, `C:\app\x.js`), not a URL's path
 * or a ratio: two segments or more, not preceded by a word character, `:`, `/` or `.`.
 */
const SERVER_PATH = /(?<![\w:/.])(?:file:\/\/)?(?:[A-Za-z]:)?(?:[\\/][\w.@~+-]+){2,}[\\/]?/g;

/** An error message as a tenant may read it: server paths replaced (stacks are never sent). */
export function tenantFacingReason(reason: string | null | undefined): string | null {
  return reason ? reason.replace(SERVER_PATH, '<server path>') : null;
}

/**
 * What a tenant sees of its dead letter: what failed (its own payload), why, when, and how often
 * it was replayed.
 * No stack trace, no server paths: those are for operators (the dashboard shows them).
 */
export function tenantFacingDeadLetter(letter: DeadLetter) {
  return {
    jobId: letter.jobId,
    queue: letter.queue,
    name: letter.name,
    tenantId: letter.tenantId,
    runId: letter.runId,
    reason: letter.reason,
    failedReason: tenantFacingReason(letter.failedReason),
    /** The tenant's own payload (without the module's envelope). */
    data: letter.data,
    attempts: letter.attempts,
    enqueuedAt: letter.envelope.enqueuedAt,
    failedAt: letter.failedAt,
    replays: letter.replays,
  };
}
