import { TenantTierOptions } from '../../lib';

export const REPORTS_QUEUE = 'reports';

/**
 * The sample's tiers (`TenantQueueModule.forRoot({ tiers })`); a tenant's tier is its directory
 * record's `tier` (see sample-app/tenants.ts). Limits here are for the `reports` queue only, so the
 * other demos keep their own behaviour.
 */
export const DEMO_TIERS: Record<string, TenantTierOptions> = {
  free: {
    queues: {
      [REPORTS_QUEUE]: { rateLimit: { max: 6, per: 60_000, burst: 2 }, maxConcurrency: 1 },
    },
  },
  pro: {
    queues: {
      [REPORTS_QUEUE]: {
        weight: 3,
        maxConcurrency: 4,
        rateLimit: { max: 120, per: 60_000, burst: 10 },
      },
    },
  },
};
