export * from './tenant-context';
export * from './tenant-resolution.middleware';
