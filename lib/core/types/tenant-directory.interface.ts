import type { TenantRateLimit } from './tenant-tier-options.interface';

/**
 * Lifecycle state of a tenant in the `TenantDirectory`.
 * @publicApi
 */
export type TenantStatus = 'active' | 'suspended' | 'deleted';

/**
 * One tenant as the application's source of truth knows it.
 * @publicApi
 */
export interface TenantRecord {
  id: string;
  status: TenantStatus;
  /** IANA zone (e.g. `Europe/Kyiv`) used by tenant-local schedules. */
  timezone?: string;
  /** Fair-share weight (default 1). */
  weight?: number;
  /** Most jobs of this tenant running at once, across all workers. */
  maxConcurrency?: number;
  /** Slots this tenant keeps on every fair queue whenever it has work (its guaranteed floor). */
  minConcurrency?: number;
  /** Tier name (`free`, `pro`, ...): the module's `tiers` option says what it sets. */
  tier?: string;
  /** This tenant's own rate limit on every fair queue; `false` lifts the tier's or queue's. */
  rateLimit?: TenantRateLimit | false;
  /** This tenant's weight inside each lane (`{ interactive: 3 }`). */
  lanes?: Record<string, number>;
  /** This tenant's dedicated pool per queue (`{ imports: 'imports-acme' }`). */
  pools?: Record<string, string>;
  [key: string]: unknown;
}

/**
 * A page of active tenants; pass `nextCursor` back to get the next page, until it is null.
 * @publicApi
 */
export interface TenantPage {
  tenants: TenantRecord[];
  nextCursor: string | null;
}

/**
 * Application port: where the module asks about tenants at execution time. Provide your own
 * through the module's `directory` option.
 * @publicApi
 */
export interface TenantDirectory {
  /** The tenant, or null when it does not exist. Throwing means "unknown right now": retried. */
  getTenant(tenantId: string): Promise<TenantRecord | null>;
  /** Active tenants, one page at a time (`cursor` null for the first page). */
  listActiveTenants(cursor: string | null): Promise<TenantPage>;
}
export const TenantDirectory = Symbol('TenantDirectory');

/**
 * Application port: does a tenant have a feature right now?
 * @publicApi
 */
export interface EntitlementChecker {
  hasEntitlement(tenantId: string, feature: string): Promise<boolean>;
}
export const EntitlementChecker = Symbol('EntitlementChecker');

/**
 * Application port: may this actor still do this in this tenant?
 * @publicApi
 */
export interface ActorPermissionChecker {
  can(actor: { id?: string; type: string }, permission: string, tenantId: string): Promise<boolean>;
}
export const ActorPermissionChecker = Symbol('ActorPermissionChecker');
