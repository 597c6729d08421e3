import { TenantPortUnavailableError } from '../errors/tenant-port-unavailable.error';
import { TenantDirectory, TenantPage, TenantRecord } from '../types/tenant-directory.interface';
import { Messages } from '../../tenant-queue.messages';

/** `guards.portTimeoutMs`'s default: how long a tenant port (the directory, a checker) may take. */
export const DEFAULT_PORT_TIMEOUT_MS = 5_000;

/** `guards.portTimeoutMs` as the app gave it (the guards feature validates it), else the default. */
export function portTimeoutOf(given: { guards?: { portTimeoutMs?: number } } | undefined): number {
  return given?.guards?.portTimeoutMs ?? DEFAULT_PORT_TIMEOUT_MS;
}

/** `work`'s result, or `late()`'s error once `ms` have passed without one. */
export async function within<T>(work: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The directory's record of a tenant, or `TenantPortUnavailableError` when it does not answer
 * within `ms`: a silent directory is an outage to its caller, never a wait without end.
 */
export function getTenantWithin(
  directory: TenantDirectory,
  tenantId: string,
  ms: number,
): Promise<TenantRecord | null> {
  return within(
    Promise.resolve().then(() => directory.getTenant(tenantId)),
    ms,
    () => new TenantPortUnavailableError(Messages.directoryLookupTimedOut(tenantId, ms)),
  );
}

/**
 * @internal True when the directory answered with another tenant's record. A record without an
 * `id`, or with the same id as a number (an integer column), is taken as the tenant's own.
 */
export function isRecordOfAnother(tenantId: string, record: TenantRecord): boolean {
  return record.id !== undefined && record.id !== null && String(record.id) !== tenantId;
}

/**
 * `getTenantWithin` for what the module reads from a record besides the guards' verdict (a tier,
 * limits, a pool, a zone): a record naming another tenant says nothing of this one, so it reads
 * as none (null), and `onOther` hears of it. (The guards refuse that tenant's jobs.)
 */
export async function ownRecordWithin(
  directory: TenantDirectory,
  tenantId: string,
  ms: number,
  onOther: (otherId: unknown) => void,
): Promise<TenantRecord | null> {
  const record = await getTenantWithin(directory, tenantId, ms);
  if (record && isRecordOfAnother(tenantId, record)) {
    onOther(record.id);
    return null;
  }
  return record;
}

/**
 * One page of the directory's active tenants, or `TenantPortUnavailableError` when it does not
 * answer within `ms` (a `@TenantCron` fan-out held by a silent directory held its worker for good).
 */
export function listActiveTenantsWithin(
  directory: TenantDirectory,
  cursor: string | null,
  ms: number,
): Promise<TenantPage> {
  return within(
    Promise.resolve().then(() => directory.listActiveTenants(cursor)),
    ms,
    () => new TenantPortUnavailableError(Messages.directoryListTimedOut(cursor, ms)),
  );
}
