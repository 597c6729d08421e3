export { Idempotent } from './idempotent.decorator';
export type { IdempotentOptions } from './idempotent.decorator';
export { claimRun, runOnce, runMarkerTableSql } from './run-once';
export type { RunMarkerClient, RunOnceOptions, RunOnceResult } from './run-once';
export { InvalidRunMarkerTableError } from './invalid-run-marker-table.error';
