import { PortNotConfiguredError } from '../errors';
import {
  ActorPermissionChecker,
  EntitlementChecker,
  TenantDirectory,
  TenantPage,
  TenantRecord,
} from '../types/tenant-directory.interface';

/**
 * The directory used when the application configures none: every tenant id that passed the
 * module's validation is an active tenant, and no tenant is listed (the module cannot know them).
 * Keeps the module usable without a directory; suspension needs a real one.
 */
export class PermissiveTenantDirectory implements TenantDirectory {
  async getTenant(tenantId: string): Promise<TenantRecord | null> {
    return { id: tenantId, status: 'active' };
  }

  async listActiveTenants(): Promise<TenantPage> {
    return { tenants: [], nextCursor: null };
  }
}

/**
 * @internal False when the app configured no directory (the token then holds the permissive
 * default): features that must list tenants (cron fan-out) refuse to start on it.
 */
export function isTenantDirectoryConfigured(directory: TenantDirectory | undefined): boolean {
  return directory !== undefined && !(directory instanceof PermissiveTenantDirectory);
}

/** Stands in for an `EntitlementChecker` nobody configured; the guards refuse to boot on it. */
export class UnconfiguredEntitlementChecker implements EntitlementChecker {
  async hasEntitlement(): Promise<boolean> {
    throw new PortNotConfiguredError(
      'No EntitlementChecker is configured: pass the "entitlementChecker" option to TenantQueueModule.',
    );
  }
}

/** Stands in for an `ActorPermissionChecker` nobody configured; the guards refuse to boot on it. */
export class UnconfiguredActorPermissionChecker implements ActorPermissionChecker {
  async can(): Promise<boolean> {
    throw new PortNotConfiguredError(
      'No ActorPermissionChecker is configured: pass the "actorPermissionChecker" option to TenantQueueModule.',
    );
  }
}
