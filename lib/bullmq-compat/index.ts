// Separate entry point: needs @nestjs/bullmq (optional peer dependency), checked first.
import { assertOptionalPeer } from '../core/peers/optional-peer';
assertOptionalPeer('nestjs-tenant-queue/bullmq', '@nestjs/bullmq');

export { TenantBullMqModule } from './tenant-bullmq.module';
