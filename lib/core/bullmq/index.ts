export * from './bullmq-seam';
export * from './redis-backend.check';
