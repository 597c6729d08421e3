export * from './in-memory-tenant-directory';
