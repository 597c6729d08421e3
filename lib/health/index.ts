// Separate entry point: needs @nestjs/terminus (optional peer dependency), checked before it is
// imported so that a missing one is named with its install command.
import { assertOptionalPeer } from '../core/peers/optional-peer';
assertOptionalPeer('nestjs-tenant-queue/health', '@nestjs/terminus');

export { TenantQueueHealthIndicator } from './tenant-queue-health.indicator';
export type { TenantQueueHealthOptions } from './tenant-queue-health.indicator';
