import { EntitlementChecker } from '../core/types/tenant-directory.interface';

/**
 * An `EntitlementChecker` kept in memory, for tests and demos. Changes apply to the next job.
 * @publicApi
 */
export class InMemoryEntitlementChecker implements EntitlementChecker {
  private readonly features = new Map<string, Set<string>>();

  constructor(entitlements: Record<string, string[]> = {}) {
    for (const [tenantId, features] of Object.entries(entitlements)) {
      for (const feature of features) this.grant(tenantId, feature);
    }
  }

  grant(tenantId: string, feature: string): void {
    const set = this.features.get(tenantId) ?? new Set<string>();
    set.add(feature);
    this.features.set(tenantId, set);
  }

  revoke(tenantId: string, feature: string): void {
    this.features.get(tenantId)?.delete(feature);
  }

  async hasEntitlement(tenantId: string, feature: string): Promise<boolean> {
    return this.features.get(tenantId)?.has(feature) ?? false;
  }
}
