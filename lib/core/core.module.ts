import { TENANT_CONTEXT_OF_ROOT } from '../tenant-queue.constants';
import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import { JobClsSetup, TENANT_JOB_CLS_OPTIONS } from './cls/job-cls-setup';
import { resolveJobClsOptions } from './cls/job-cls.options';
import { TenantContext } from './context/tenant-context';
import { TenantResolutionMiddleware } from './context/tenant-resolution.middleware';
import { TenantResolver } from './context/tenant-resolver';
import {
  TENANT_QUEUE_FEATURE_OPTIONS,
  TENANT_QUEUE_KERNEL_MODULE_OPTIONS,
  TENANT_QUEUE_MODULE_OPTIONS,
  TENANT_QUEUE_OPTIONS,
  resolveTenantQueueOptions,
} from './options/core.options';
import { TenantEnvelopeCodec } from './envelope/tenant-envelope.codec';
import { QueueConsumerCheck } from './processor/queue-consumer.check';
import { QueueSettingsCheck } from './queues/queue-settings.check';
import { TenantJobPipeline } from './processor/tenant-job-pipeline';
import { TenantSeams } from './seams/tenant-seams';
import { TenantJobRunner } from './processor/tenant-job.runner';
import { ScopedProcessorResolver } from './processor/scoped-processor.resolver';
import { TenantProcessorExplorer } from './processor/tenant-processor.explorer';
import { FailedBootCloser } from './processor/failed-boot.closer';
import { TenantProcessorMetadataAccessor } from './processor/tenant-processor.metadata-accessor';
import { TimeoutStage } from './processor/timeout.stage';
import {
  BullWorkerBackend,
  TENANT_WORKER_BACKEND,
  TenantWorkerBackend,
} from './processor/worker-backend';
import { TenantWorkerLauncher } from './processor/worker-launcher';
import {
  RedisQueueBackend,
  TENANT_QUEUE_BACKEND,
  TenantQueueBackend,
} from './queues/queue-backend';
import { TenantQueuePlugins } from './queues/tenant-queue-plugins';
import { TenantQueueRegistry } from './queues/tenant-queue.registry';
import { TenantQueueRedis } from './redis/tenant-queue.redis';
import { JobScope } from './scope/job-scope';
import { TenantTiers } from './tenants/tenant-tiers.service';

/** Where producers write and what consumes their queues; Redis and BullMQ unless swapped. */
export interface TenantQueueCoreBackends {
  queues: Type<TenantQueueBackend>;
  workers: Type<TenantWorkerBackend>;
}

const KERNEL: Provider[] = [
  {
    provide: TENANT_QUEUE_OPTIONS,
    useFactory: resolveTenantQueueOptions,
    inject: [TENANT_QUEUE_MODULE_OPTIONS, { token: TENANT_QUEUE_FEATURE_OPTIONS, optional: true }],
  },
  { provide: TENANT_QUEUE_KERNEL_MODULE_OPTIONS, useExisting: TENANT_QUEUE_MODULE_OPTIONS },
  {
    provide: TENANT_JOB_CLS_OPTIONS,
    useFactory: resolveJobClsOptions,
    inject: [TENANT_QUEUE_MODULE_OPTIONS],
  },
  TenantResolver,
  TenantResolutionMiddleware,
  TenantContext,
  { provide: TENANT_CONTEXT_OF_ROOT, useExisting: TenantContext },
  TenantEnvelopeCodec,
  TenantQueueRedis,
  TenantQueuePlugins,
  TenantQueueRegistry,
  TenantTiers,
  TenantSeams,
  TenantJobPipeline,
  TenantJobRunner,
  ScopedProcessorResolver,
  TenantProcessorMetadataAccessor,
  TenantProcessorExplorer,
  TenantWorkerLauncher,
  FailedBootCloser,
  TimeoutStage,
  JobScope,
  JobClsSetup,
];

/**
 * The kernel as a Nest module: context, envelope, producers and registry, the job runner and its
 * pipeline, scope, tiers, Redis. It reads `TENANT_QUEUE_MODULE_OPTIONS` from the module that
 * imports it (`TenantQueueModule.forRoot`, or the testing module), and imports no feature: the
 * features plug into its seams from their own modules.
 */
@Module({})
export class TenantQueueCoreModule {
  /** `backends`: the testing module's in-memory ones; Redis and BullMQ by default. */
  static register(backends?: TenantQueueCoreBackends): DynamicModule {
    const providers: Provider[] = [
      ...KERNEL,
      { provide: TENANT_QUEUE_BACKEND, useClass: backends?.queues ?? RedisQueueBackend },
      { provide: TENANT_WORKER_BACKEND, useClass: backends?.workers ?? BullWorkerBackend },
      // Asks Redis which workers exist: only where queues live in Redis.
      ...(backends ? [] : [QueueConsumerCheck, QueueSettingsCheck]),
    ];
    return {
      module: TenantQueueCoreModule,
      imports: [ClsModule, DiscoveryModule],
      providers,
      exports: providers.map((provider) =>
        typeof provider === 'function' ? provider : (provider as { provide: unknown }).provide,
      ) as never,
    };
  }
}
