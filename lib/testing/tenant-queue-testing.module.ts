import {
  DynamicModule,
  Global,
  Inject,
  MiddlewareConsumer,
  Module,
  NestModule,
  Provider,
} from '@nestjs/common';
import { ClsModule } from 'nestjs-cls';
import { TenantQueueModuleOptions } from '../interfaces/tenant-queue-options.interface';
import { TenantQueuePortOptions } from '../guards/tenant-queue-ports.interface';
import { PORT_TOKENS, omitPortOptions, portProviders } from '../guards/port-providers';
import { TenantQueueCoreModule } from '../core/core.module';
import {
  ResolvedTenantQueueOptions,
  TENANT_QUEUE_MODULE_OPTIONS,
  TENANT_QUEUE_OPTIONS,
} from '../core/options/core.options';
import { FairQueueFeature } from '../fairness/fair-queue.feature';
import { TenantGuardsModule } from '../guards/tenant-guards.module';
import { TenantPoolsModule } from '../pools/tenant-pools.module';
import { TenantTelemetryModule } from '../telemetry/tenant-telemetry.module';
import { mountTenantResolution } from '../tenant-queue.module';
import { InMemoryQueueBackend } from './in-memory-queue.backend';
import { InlineWorkerBackend } from './inline-worker.backend';
import { TenantQueueTesting } from './tenant-queue-testing';

/** The features that need no Redis; the kernel's backends swapped for in-memory ones. */
const FEATURES = [TenantGuardsModule, TenantPoolsModule, TenantTelemetryModule];

/**
 * Stands in for `TenantQueueModule.forRoot()` in your tests: no Redis. `registerQueue` queues
 * record what is enqueued (`TenantQueueTesting.jobs()`), and `@TenantProcessor`s run those jobs
 * once, inline, through the real runner: same tenant context, envelope checks and job guards.
 * Features that keep state in Redis (fair share, schedules, dead letters) need the real module.
 * @publicApi
 */
@Global()
@Module({})
export class TenantQueueTestingModule implements NestModule {
  constructor(@Inject(TENANT_QUEUE_OPTIONS) private readonly options: ResolvedTenantQueueOptions) {}

  configure(consumer: MiddlewareConsumer): void {
    mountTenantResolution(consumer, this.options);
  }

  static forRoot(
    options: Partial<TenantQueueModuleOptions> & TenantQueuePortOptions = {},
  ): DynamicModule {
    const providers: Provider[] = [
      {
        provide: TENANT_QUEUE_MODULE_OPTIONS,
        useValue: { connection: {}, ...omitPortOptions(options) },
      },
      ...portProviders(options),
      TenantQueueTesting,
      FairQueueFeature,
    ];
    const core = TenantQueueCoreModule.register({
      queues: InMemoryQueueBackend,
      workers: InlineWorkerBackend,
    });
    return {
      module: TenantQueueTestingModule,
      imports: [ClsModule, core, ...FEATURES],
      providers,
      exports: [
        core,
        ...FEATURES,
        TENANT_QUEUE_MODULE_OPTIONS,
        ...PORT_TOKENS,
        TenantQueueTesting,
        FairQueueFeature,
      ],
    };
  }
}
