import { TenantQueueError } from '../core/errors';

/**
 * `runOnce`/`claimRun`/`runMarkerTableSql` got a table name that is not a plain SQL identifier.
 * @publicApi
 */
export class InvalidRunMarkerTableError extends TenantQueueError {}
