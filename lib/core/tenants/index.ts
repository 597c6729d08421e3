export * from '../types/tenant-tier-options.interface';
export { TenantTiers } from './tenant-tiers.service';
export type { TenantProfile } from './tenant-tiers.service';
export { UnknownTierError } from './unknown-tier.error';
