import { DynamicModule, Module } from '@nestjs/common';
import { TenantQueueModule } from '../../lib';
import { DigestProcessor } from './digest.processor';
import { DigestService } from './digest.service';
import { DigestStore } from './digest.store';
import { SchedulesController } from './schedules.controller';

/**
 * Schedules demo: a nightly digest for every tenant at 09:00 in the tenant's own zone
 * (`@TenantCron`), and `PUT /schedules/digest` for a tenant to set its own schedule
 * (`TenantScheduler`). Import next to `TenantQueueModule.forRoot(...)`, which must be given a
 * `TenantDirectory` with the tenants' zones (the sample passes `...guardsDemoPorts()`).
 */
@Module({})
export class SchedulesDemoModule {
  static register(): DynamicModule {
    return {
      module: SchedulesDemoModule,
      imports: [TenantQueueModule.registerQueue({ name: 'digests' })],
      controllers: [SchedulesController],
      providers: [DigestStore, DigestService, DigestProcessor],
    };
  }
}
