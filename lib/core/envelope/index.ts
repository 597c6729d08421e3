export * from './tenant-envelope.codec';
