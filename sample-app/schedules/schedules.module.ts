import { DynamicModule, Global, Module } from '@nestjs/common';
import { InMemoryTenantDirectory, TenantDirectory, TenantQueueModule } from '../../lib';
import { DigestProcessor } from './digest.processor';
import { DigestService } from './digest.service';
import { DigestStore } from './digest.store';
import { SchedulesController } from './schedules.controller';

/** Demo tenants and their zones. */
export const DEMO_TENANTS = [
  { id: 'acme', timezone: 'Europe/Kyiv' },
  { id: 'globex', timezone: 'America/New_York' },
  { id: 'initech', timezone: 'Australia/Lord_Howe' },
];

/** Supplies the TenantDirectory token to the whole app (the scheduler pages through it). */
@Global()
@Module({})
class DemoDirectoryModule {}

/**
 * Schedules demo: a nightly digest for every tenant at 09:00 in the tenant's own zone
 * (`@TenantCron`), and `PUT /schedules/digest` for a tenant to set its own schedule
 * (`TenantScheduler`). Import next to `TenantQueueModule.forRoot(...)`.
 */
@Module({})
export class SchedulesDemoModule {
  static register(directory = new InMemoryTenantDirectory(DEMO_TENANTS)): DynamicModule {
    return {
      module: SchedulesDemoModule,
      imports: [
        {
          module: DemoDirectoryModule,
          providers: [{ provide: TenantDirectory, useValue: directory }],
          exports: [TenantDirectory],
        },
        TenantQueueModule.registerQueue({ name: 'digests' }),
      ],
      controllers: [SchedulesController],
      providers: [DigestStore, DigestService, DigestProcessor],
    };
  }
}
