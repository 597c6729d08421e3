import { TenantQueueError } from '../core/errors';

/**
 * A `DeadLetters.list` page is refused: its `offset` is not an integer >= 0 or its `limit` not an
 * integer >= 1. Nothing is read.
 * @publicApi
 */
export class InvalidDeadLetterQueryError extends TenantQueueError {}
