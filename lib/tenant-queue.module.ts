import {
  DynamicModule,
  Global,
  Inject,
  MiddlewareConsumer,
  Module,
  NestModule,
  Provider,
  RequestMethod,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import { TenantContext } from './context/tenant-context';
import { TenantResolutionMiddleware } from './context/tenant-resolution.middleware';
import { TenantResolver } from './context/tenant-resolver';
import { TenantEnvelopeCodec } from './envelope/tenant-envelope.codec';
import { FairGateRegistry } from './fairness/fair-gate.registry';
import { TenantFairness } from './fairness/tenant-fairness.service';
import { TenantRequiredGuard } from './guards/tenant-required.guard';
import { RegisterTenantQueueOptions } from './interfaces/register-queue-options.interface';
import { TenantJobPipeline } from './processor/tenant-job-pipeline';
import { TenantJobRunner } from './processor/tenant-job.runner';
import { TenantProcessorExplorer } from './processor/tenant-processor.explorer';
import { TenantProcessorMetadataAccessor } from './processor/tenant-processor.metadata-accessor';
import { getTenantQueueToken } from './tenant-queue.constants';
import {
  ConfigurableTenantQueueModule,
  TENANT_QUEUE_MODULE_OPTIONS,
} from './tenant-queue.module-definition';
import {
  ResolvedTenantQueueOptions,
  TENANT_QUEUE_OPTIONS,
  resolveTenantQueueOptions,
} from './tenant-queue.options';
import { TenantQueueRedis } from './tenant-queue.redis';
import { TenantQueueRegistry } from './tenant-queue.registry';

@Module({})
class TenantQueueFeatureModule {}

/**
 * Root module: `forRoot(options)` / `forRootAsync(...)` once, next to the app's own
 * `ClsModule.forRoot(...)`; `registerQueue(...)` for each queue a module produces or consumes.
 */
@Global()
@Module({
  imports: [ClsModule, DiscoveryModule],
  providers: [
    {
      provide: TENANT_QUEUE_OPTIONS,
      useFactory: resolveTenantQueueOptions,
      inject: [TENANT_QUEUE_MODULE_OPTIONS],
    },
    TenantResolver,
    TenantEnvelopeCodec,
    TenantContext,
    TenantQueueRegistry,
    TenantQueueRedis,
    TenantJobPipeline,
    TenantJobRunner,
    TenantProcessorMetadataAccessor,
    TenantProcessorExplorer,
    TenantResolutionMiddleware,
    TenantRequiredGuard,
    FairGateRegistry,
    TenantFairness,
  ],
  exports: [
    TENANT_QUEUE_OPTIONS,
    TenantContext,
    TenantEnvelopeCodec,
    TenantQueueRegistry,
    TenantQueueRedis,
    TenantRequiredGuard,
    TenantResolutionMiddleware,
    TenantJobPipeline,
    TenantFairness,
  ],
})
export class TenantQueueModule extends ConfigurableTenantQueueModule implements NestModule {
  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
  ) {
    super();
  }

  /** Declares queues; each becomes injectable with `@InjectTenantQueue(name)`. */
  static registerQueue(...queues: RegisterTenantQueueOptions[]): DynamicModule {
    const providers: Provider[] = queues.map((queue) => ({
      provide: getTenantQueueToken(queue.name),
      useFactory: (registry: TenantQueueRegistry) => registry.createQueue(queue),
      inject: [TenantQueueRegistry],
    }));
    return {
      module: TenantQueueFeatureModule,
      providers,
      exports: providers.map((provider) => (provider as { provide: string }).provide),
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    if (!this.options.resolution.mount) return;
    consumer
      .apply(TenantResolutionMiddleware)
      .forRoutes({ path: '{*splat}', method: RequestMethod.ALL });
  }
}
