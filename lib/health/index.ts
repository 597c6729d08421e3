// Separate entry point: needs @nestjs/terminus (optional peer dependency).
export { TenantQueueHealthIndicator } from './tenant-queue-health.indicator';
export type { TenantQueueHealthOptions } from './tenant-queue-health.indicator';
