import {
  DynamicModule,
  Global,
  Inject,
  MiddlewareConsumer,
  Module,
  NestModule,
  Provider,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import { TenantQueueModuleOptions } from '../interfaces';
import { TenantQueuePortOptions, PORT_TOKENS, omitPortOptions, portProviders } from '../guards';
import { TenantQueueCoreModule } from '../core/core.module';
import {
  ResolvedTenantQueueOptions,
  TENANT_QUEUE_FEATURE_OPTIONS,
  TENANT_QUEUE_MODULE_OPTIONS,
  TENANT_QUEUE_OPTIONS,
} from '../core/options/core.options';
import { FairQueueFeature } from '../fairness';
import { DeadLetterQueueFeature } from '../dead-letters';
import { TENANT_QUEUE_METRICS_OPTIONS, resolveMetricsOptions } from '../metrics';
import {
  TENANT_SCHEDULER_OPTIONS,
  TenantCronCheck,
  resolveTenantSchedulerOptions,
} from '../scheduler';
import {
  FEATURE_OPTIONS,
  REDIS_FREE_FEATURES,
  mountTenantResolution,
} from '../tenant-queue.module';
import { InMemoryQueueBackend } from './in-memory-queue.backend';
import { InlineWorkerBackend } from './inline-worker.backend';
import { TenantQueueTesting } from './tenant-queue-testing';

/** The features that need no Redis; the kernel's backends swapped for in-memory ones. */
const FEATURES = REDIS_FREE_FEATURES;

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
      FEATURE_OPTIONS,
      TenantQueueTesting,
      FairQueueFeature,
      // The checks of what the real module brings and this one leaves out: the same refusals.
      DeadLetterQueueFeature,
      {
        provide: TENANT_SCHEDULER_OPTIONS,
        useFactory: resolveTenantSchedulerOptions,
        inject: [TENANT_QUEUE_MODULE_OPTIONS],
      },
      {
        provide: TENANT_QUEUE_METRICS_OPTIONS,
        useFactory: resolveMetricsOptions,
        inject: [TENANT_QUEUE_MODULE_OPTIONS],
      },
      TenantCronCheck,
    ];
    const core = TenantQueueCoreModule.register({
      queues: InMemoryQueueBackend,
      workers: InlineWorkerBackend,
    });
    return {
      module: TenantQueueTestingModule,
      imports: [ClsModule, DiscoveryModule, core, ...FEATURES],
      providers,
      exports: [
        core,
        ...FEATURES,
        TENANT_QUEUE_MODULE_OPTIONS,
        TENANT_QUEUE_FEATURE_OPTIONS,
        ...PORT_TOKENS,
        TenantQueueTesting,
        FairQueueFeature,
      ],
    };
  }
}
