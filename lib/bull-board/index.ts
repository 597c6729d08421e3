// Separate entry point: needs @bull-board/nestjs (optional peer dependency), checked first.
import { assertOptionalPeer } from '../core/peers/optional-peer';
assertOptionalPeer('nestjs-tenant-queue/bull-board', '@bull-board/nestjs');

export { TenantBullBoardModule } from './tenant-bull-board.module';
export type { TenantBullBoardOptions, BullBoardQueueAdapter } from './tenant-bull-board.options';
