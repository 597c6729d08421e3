import { DynamicModule, Module } from '@nestjs/common';
import { ClsModule } from 'nestjs-cls';
import { TenantQueueModule } from '../lib';
import { ContainmentDemoModule } from './containment';
import { FairnessDemoModule } from './fairness/fairness-demo.module';
import { VisibilityDemoModule } from './visibility';
import { GuardsDemoModule, guardsDemoPorts } from './guards/guards-demo.module';
import { PoolsDemoModule } from './pools';
import { SchedulesDemoModule } from './schedules/schedules.module';
import { ThumbnailsModule } from './thumbnails/thumbnails.module';
import { DEMO_TIERS, TiersDemoModule } from './tiers/tiers-demo.module';
import { ProvidersDemoModule } from './providers';
import { DatabaseDemoModule } from './database';

export interface SampleOptions {
  redisUrl: string;
  /** Redis key prefix; the sample never touches keys outside it. */
  prefix?: string;
}

/** The sample application: every feature of the module, one folder each. */
@Module({})
export class AppModule {
  static register(options: SampleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ClsModule.forRoot({ global: true, middleware: { mount: true } }),
        TenantQueueModule.forRoot({
          connection: { url: options.redisUrl },
          prefix: options.prefix ?? 'tq-sample',
          environment: 'sample',
          resolution: { order: ['header', 'subdomain'] },
          ...guardsDemoPorts(),
          tiers: DEMO_TIERS,
        }),
        ThumbnailsModule,
        SchedulesDemoModule.register(),
        ContainmentDemoModule,
        GuardsDemoModule,
        FairnessDemoModule,
        PoolsDemoModule,
        VisibilityDemoModule.register({ path: 'admin/queues' }),
        TiersDemoModule,
        ProvidersDemoModule,
        DatabaseDemoModule.register(),
      ],
    };
  }
}
