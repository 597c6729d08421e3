import { TenantQueueError } from './tenant-queue.error';

/**
 * A job id is refused: at enqueue, a caller-chosen `jobId` that is the name of one of BullMQ's
 * own keys of the queue (`wait`, `meta`, `id`, ...) or lies in the module's own id namespace
 * (contains `~`, or ends in `.r<n>`), or is longer than 1000 characters, nothing written; when
 * asked about (`TenantQueueInspector.explain`, `DeadLetters.get`/`replay`/`purge`), an id that is
 * not a non-empty string or is longer than any id an add admits.
 * @publicApi
 */
export class InvalidJobIdError extends TenantQueueError {}
