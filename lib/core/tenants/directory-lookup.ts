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
