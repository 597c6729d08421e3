import { DynamicModule, Module } from '@nestjs/common';
import { TenantQueueDashboardModule } from '../../lib';
import { BasicAuthGuard } from './basic-auth.guard';
import { MetricsController } from './metrics.controller';

export interface VisibilityDemoOptions {
  /** Where the dashboard is mounted. @default 'admin/queues' */
  path?: string;
}

/**
 * Visibility demo: the tenant dashboard (behind Basic auth, `admin:$DASHBOARD_PASSWORD`) and a
 * Prometheus `/metrics` endpoint. Needs `TenantQueueModule.forRoot` and `ClsModule.forRoot` in
 * the host app; pause/resume appear when a `TenantQueueControls` provider exists (fair gate).
 */
@Module({})
export class VisibilityDemoModule {
  static register(options: VisibilityDemoOptions = {}): DynamicModule {
    return {
      module: VisibilityDemoModule,
      imports: [
        TenantQueueDashboardModule.register({
          path: options.path ?? 'admin/queues',
          guard: BasicAuthGuard,
        }),
      ],
      controllers: [MetricsController],
    };
  }
}
