import { DynamicModule, Module } from '@nestjs/common';
import { TENANT_BULL_BOARD_OPTIONS, TenantBullBoardRegistrar } from './tenant-bull-board.registrar';
import { TenantBullBoardOptions } from './tenant-bull-board.options';

/**
 * Shows the module's queues on bull-board: import it next to
 * `BullBoardModule.forRoot({ route, adapter: ExpressAdapter })` from `@bull-board/nestjs`.
 * (`BullBoardModule.forFeature({ name })` cannot find them: they are not `@nestjs/bullmq` queues.)
 * @publicApi
 */
@Module({})
export class TenantBullBoardModule {
  static register(options: TenantBullBoardOptions): DynamicModule {
    return {
      module: TenantBullBoardModule,
      providers: [
        { provide: TENANT_BULL_BOARD_OPTIONS, useValue: options },
        TenantBullBoardRegistrar,
      ],
    };
  }
}
