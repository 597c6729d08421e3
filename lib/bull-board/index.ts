export { TenantBullBoardModule } from './tenant-bull-board.module';
export type { TenantBullBoardOptions, BullBoardQueueAdapter } from './tenant-bull-board.options';
