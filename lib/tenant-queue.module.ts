import { TenantTiers } from './tiers/tenant-tiers.service';
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
import { DeadLetterWorkerPlugin } from './dead-letters/dead-letter.plugin';
import { DeadLetters } from './dead-letters/dead-letters.service';
import { TenantResolutionMiddleware } from './context/tenant-resolution.middleware';
import { TenantResolver } from './context/tenant-resolver';
import { TenantEnvelopeCodec } from './envelope/tenant-envelope.codec';
import { JobCancellations } from './guards/job-cancellations';
import { TenantJobGuardsStage } from './guards/tenant-job-guards.stage';
import { FairGateRegistry } from './fairness/fair-gate.registry';
import { TenantFairness } from './fairness/tenant-fairness.service';
import { FairnessStateSource } from './fairness/fairness-state.source';
import {
  TenantQueueControls,
  TenantQueueStateSource,
} from './metrics/tenant-queue-state-source.interface';
import { TenantRequiredGuard } from './guards/tenant-required.guard';
import { TenantStatusService } from './guards/tenant-status.service';
import { RegisterTenantQueueOptions } from './interfaces/register-queue-options.interface';
import { IdempotencyStage } from './processor/idempotency.stage';
import { TenantJobPipeline } from './processor/tenant-job-pipeline';
import { TimeoutStage } from './processor/timeout.stage';
import { TenantJobRunner } from './processor/tenant-job.runner';
import { TenantProcessorExplorer } from './processor/tenant-processor.explorer';
import { TenantProcessorMetadataAccessor } from './processor/tenant-processor.metadata-accessor';
import { JobScope } from './scope/job-scope';
import { QueueConsumerCheck } from './processor/queue-consumer.check';
import { TenantQueueRootMissingError } from './errors/tenant-queue-root-missing.error';
import { Messages } from './tenant-queue.messages';
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
import { METRICS_SINK_PROVIDER } from './metrics/metrics-sink.provider';
import { MetricsSink } from './metrics/metrics-sink.interface';
import { TENANT_QUEUE_METRICS_OPTIONS, resolveMetricsOptions } from './metrics/metrics.options';
import { TenantMetricsGauges } from './metrics/tenant-metrics.gauges';
import { TenantMetricsRecorder } from './metrics/tenant-metrics.recorder';
import { TenantQueueInspector } from './metrics/tenant-queue-inspector.service';
import { TenantQueueRegistry } from './tenant-queue.registry';
import { TenantSpanStage } from './telemetry/tenant-span.stage';
import { ScheduleStore } from './scheduler/schedule.store';
import { ScheduleTicker } from './scheduler/schedule-ticker';
import { RedisServerClock, SchedulerClock } from './scheduler/scheduler-clock';
import { TenantCronExplorer } from './scheduler/tenant-cron.explorer';
import { TenantScheduler } from './scheduler/tenant-scheduler';
import {
  TENANT_SCHEDULER_OPTIONS,
  resolveTenantSchedulerOptions,
} from './scheduler/tenant-scheduler.options';
import { JobClsSetup, TENANT_JOB_CLS_OPTIONS } from './cls/job-cls-setup';
import { resolveJobClsOptions } from './cls/job-cls.options';

/** @internal Providers of the root module, shared with `TenantQueueTestingModule`. */
export const TENANT_QUEUE_CORE_PROVIDERS: Provider[] = [
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
  TenantStatusService,
  TenantJobGuardsStage,
  JobCancellations,
  TimeoutStage,
  TenantTiers,
  JobScope,
  {
    provide: TENANT_JOB_CLS_OPTIONS,
    useFactory: resolveJobClsOptions,
    inject: [TENANT_QUEUE_MODULE_OPTIONS],
  },
  JobClsSetup,
];

export const TENANT_QUEUE_CORE_EXPORTS = [
  TENANT_QUEUE_OPTIONS,
  JobScope,
  TenantTiers,
  TenantContext,
  TenantEnvelopeCodec,
  TenantQueueRegistry,
  TenantQueueRedis,
  TenantRequiredGuard,
  TenantResolutionMiddleware,
  TenantJobPipeline,
  TenantStatusService,
  JobCancellations,
];

/** @internal Mounts the resolution middleware on every route unless `resolution.mount` is off. */
export function mountTenantResolution(
  consumer: MiddlewareConsumer,
  options: ResolvedTenantQueueOptions,
): void {
  if (!options.resolution.mount) return;
  consumer
    .apply(TenantResolutionMiddleware)
    .forRoutes({ path: '{*splat}', method: RequestMethod.ALL });
}

/** Features that keep their state in Redis; the testing module leaves them out. */
const TENANT_QUEUE_REDIS_FEATURE_PROVIDERS: Provider[] = [
  FairGateRegistry,
  TenantFairness,
  FairnessStateSource,
  { provide: TenantQueueStateSource, useExisting: FairnessStateSource },
  { provide: TenantQueueControls, useExisting: FairnessStateSource },
  IdempotencyStage,
  DeadLetters,
  DeadLetterWorkerPlugin,
  {
    provide: TENANT_SCHEDULER_OPTIONS,
    useFactory: resolveTenantSchedulerOptions,
    inject: [TENANT_QUEUE_MODULE_OPTIONS],
  },
  { provide: SchedulerClock, useClass: RedisServerClock },
  ScheduleStore,
  ScheduleTicker,
  TenantScheduler,
  TenantCronExplorer,
  {
    provide: TENANT_QUEUE_METRICS_OPTIONS,
    useFactory: resolveMetricsOptions,
    inject: [TENANT_QUEUE_MODULE_OPTIONS],
  },
  METRICS_SINK_PROVIDER,
  TenantMetricsRecorder,
  TenantMetricsGauges,
  TenantQueueInspector,
  QueueConsumerCheck,
  TenantSpanStage,
];

@Module({})
class TenantQueueFeatureModule {}

/**
 * Root module: `forRoot(options)` / `forRootAsync(...)` once, next to the app's own
 * `ClsModule.forRoot(...)`; `registerQueue(...)` for each queue a module produces or consumes.
 */
@Global()
@Module({
  imports: [ClsModule, DiscoveryModule],
  providers: [...TENANT_QUEUE_CORE_PROVIDERS, ...TENANT_QUEUE_REDIS_FEATURE_PROVIDERS],
  exports: [
    ...TENANT_QUEUE_CORE_EXPORTS,
    TenantScheduler,
    DeadLetters,
    TenantFairness,
    TenantQueueInspector,
    MetricsSink,
    TenantQueueStateSource,
    TenantQueueControls,
    QueueConsumerCheck,
    TenantCronExplorer,
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
    // Both optional: without forRoot, a typed error naming the fix instead of Nest's DI error;
    // without Redis features (the testing module), no consumer check.
    const providers: Provider[] = queues.map((queue) => ({
      provide: getTenantQueueToken(queue.name),
      useFactory: (registry?: TenantQueueRegistry, consumers?: QueueConsumerCheck) => {
        if (!registry) {
          throw new TenantQueueRootMissingError(
            Messages.rootModuleMissing(queues.map((q) => q?.name)),
          );
        }
        const created = registry.createQueue(queue);
        consumers?.expect(created.name);
        return created;
      },
      inject: [
        { token: TenantQueueRegistry, optional: true },
        { token: QueueConsumerCheck, optional: true },
      ],
    }));
    return {
      module: TenantQueueFeatureModule,
      providers,
      exports: providers.map((provider) => (provider as { provide: string }).provide),
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    mountTenantResolution(consumer, this.options);
  }
}
