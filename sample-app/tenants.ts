/** The sample's tenants and their zones (the schedules demo runs digests at 09:00 local time). */
export const DEMO_TENANTS = [
  { id: 'acme', timezone: 'Europe/Kyiv' },
  { id: 'globex', timezone: 'America/New_York' },
  { id: 'initech', timezone: 'Australia/Lord_Howe' },
];
