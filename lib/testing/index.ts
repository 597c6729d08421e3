export * from './in-memory-tenant-directory';
export * from './in-memory-entitlement-checker';
export * from './in-memory-actor-permission-checker';
