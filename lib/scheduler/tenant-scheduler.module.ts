import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TENANT_QUEUE_MODULE_OPTIONS } from '../core/options/core.options';
import { ScheduleDelivery } from './schedule-delivery';
import { SchedulePlanner } from './schedule-planner';
import { ScheduleTicker } from './schedule-ticker';
import { ScheduleStore } from './schedule.store';
import { RedisServerClock, SchedulerClock } from './scheduler-clock';
import { TenantCronExplorer } from './tenant-cron.explorer';
import { TenantScheduler } from './tenant-scheduler';
import {
  TENANT_SCHEDULER_OPTIONS,
  resolveTenantSchedulerOptions,
} from './tenant-scheduler.options';

/** Per-tenant schedules (`TenantScheduler`) and `@TenantCron`; options slice `scheduler`. */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: TENANT_SCHEDULER_OPTIONS,
      useFactory: resolveTenantSchedulerOptions,
      inject: [TENANT_QUEUE_MODULE_OPTIONS],
    },
    { provide: SchedulerClock, useClass: RedisServerClock },
    ScheduleStore,
    SchedulePlanner,
    ScheduleDelivery,
    ScheduleTicker,
    TenantScheduler,
    TenantCronExplorer,
  ],
  exports: [
    TENANT_SCHEDULER_OPTIONS,
    SchedulerClock,
    ScheduleStore,
    ScheduleTicker,
    TenantScheduler,
    TenantCronExplorer,
  ],
})
export class TenantSchedulerModule {}
