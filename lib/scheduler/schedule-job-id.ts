import { tenantKeyPart } from '../core/context/tenant-key';

/**
 * Deterministic job ids of scheduled jobs. BullMQ refuses ids containing ":" (and integer-like
 * ids), so parts are joined with "~", the occurrence is written as `yyyyMMddTHHmmssZ` (UTC) and
 * the tenant id as its key part (`tenantKeyPart`: no `:` survives).
 * @publicApi
 */
export const JOB_ID_SEPARATOR = '~';

/**
 * `2026-11-01T09:30:00.000Z` -> `20261101T093000Z`.
 * @publicApi
 */
export function formatOccurrence(occurrence: Date | number): string {
  const iso = new Date(occurrence).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

/**
 * Job id of one tenant's run of a `@TenantCron`: `<name>~<tenantId>~<yyyyMMddTHHmmssZ>`.
 * @publicApi
 */
export function tenantCronJobId(name: string, tenantId: string, occurrence: Date | number): string {
  return [name, tenantKeyPart(tenantId), formatOccurrence(occurrence)].join(JOB_ID_SEPARATOR);
}

/**
 * Job id of a tenant schedule's run: `sched~<tenantId>~<key>~<yyyyMMddTHHmmssZ>`.
 * @publicApi
 */
export function tenantScheduleJobId(
  tenantId: string,
  key: string,
  occurrence: Date | number,
): string {
  return ['sched', tenantKeyPart(tenantId), key, formatOccurrence(occurrence)].join(
    JOB_ID_SEPARATOR,
  );
}

/** @internal Job id of a `@TenantCron` fan-out: `fanout~<name>~<first occurrence>`. */
export function fanOutJobId(name: string, from: number): string {
  return ['fanout', name, formatOccurrence(from)].join(JOB_ID_SEPARATOR);
}
