import {
  EntitlementChecker,
  InMemoryTenantDirectory,
  TenantQueuePortOptions,
  TenantRecord,
} from '../../lib';
import { DEMO_TENANTS } from '../tenants';

/**
 * The demo's tenant directory: acme, globex and initech are known; any other tenant counts as
 * active too, so the other demos keep working with whatever tenant they send.
 */
export class DemoTenantDirectory extends InMemoryTenantDirectory {
  override async getTenant(tenantId: string): Promise<TenantRecord | null> {
    return (await super.getTenant(tenantId)) ?? { id: tenantId, status: 'active' };
  }
}

/** Every tenant has every feature until the demo revokes one. */
export class DemoEntitlements implements EntitlementChecker {
  private readonly revoked = new Set<string>();

  grant(tenantId: string, feature: string): void {
    this.revoked.delete(JSON.stringify([tenantId, feature]));
  }

  revoke(tenantId: string, feature: string): void {
    this.revoked.add(JSON.stringify([tenantId, feature]));
  }

  async hasEntitlement(tenantId: string, feature: string): Promise<boolean> {
    return !this.revoked.has(JSON.stringify([tenantId, feature]));
  }
}

/**
 * Spread into `TenantQueueModule.forRoot({ ... })`: fresh in-memory ports per app. The directory
 * holds the sample's tenants with their zones; the schedules demo reads it too.
 */
export function guardsDemoPorts(): TenantQueuePortOptions {
  return {
    directory: {
      useFactory: () => new DemoTenantDirectory(DEMO_TENANTS),
    },
    entitlementChecker: { useClass: DemoEntitlements },
  };
}
