/**
 * The sample's tenants, their zones (the schedules demo runs digests at 09:00 local time) and
 * tiers (the tiers demo: see sample-app/tiers/demo-tiers.ts).
 */
export const DEMO_TENANTS = [
  { id: 'acme', timezone: 'Europe/Kyiv', tier: 'pro' },
  { id: 'globex', timezone: 'America/New_York', tier: 'free' },
  { id: 'initech', timezone: 'Australia/Lord_Howe', tier: 'free' },
];
