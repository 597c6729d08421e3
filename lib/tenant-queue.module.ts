import { isDeepStrictEqual } from 'node:util';
import {
  DynamicModule,
  FactoryProvider,
  Global,
  Inject,
  MiddlewareConsumer,
  Module,
  NestModule,
  Provider,
  RequestMethod,
} from '@nestjs/common';
import { ClsModule } from 'nestjs-cls';
import { TenantQueueCoreModule } from './core/core.module';
import {
  ResolvedTenantQueueOptions,
  TENANT_QUEUE_FEATURE_OPTIONS,
  TENANT_QUEUE_KERNEL_MODULE_OPTIONS,
  TENANT_QUEUE_OPTIONS,
} from './core/options/core.options';
import { CoreModuleOptions } from './core/types/core-options.interface';
import { TenantQueuePortOptions } from './guards';
import { TenantQueueModuleOptions } from './interfaces/tenant-queue-options.interface';
import { TenantResolutionMiddleware } from './core/context/tenant-resolution.middleware';
import { TenantQueueRootMissingError } from './core/errors/tenant-queue-root-missing.error';
import { FailedBootCloser } from './core/processor/failed-boot.closer';
import { QueueConsumerCheck } from './core/processor/queue-consumer.check';
import { TenantQueueRegistry } from './core/queues/tenant-queue.registry';
import { TenantDeadLettersModule } from './dead-letters/tenant-dead-letters.module';
import { TenantFairnessModule } from './fairness/tenant-fairness.module';
import { TenantGuardsModule } from './guards/tenant-guards.module';
import { TenantIdempotencyModule } from './idempotency/tenant-idempotency.module';
import { RegisterTenantQueueOptions } from './interfaces/register-queue-options.interface';
import { TenantMetricsModule } from './metrics/tenant-metrics.module';
import { TenantPoolsModule } from './pools/tenant-pools.module';
import { TenantSchedulerModule } from './scheduler/tenant-scheduler.module';
import { TenantTelemetryModule } from './telemetry/tenant-telemetry.module';
import { TENANT_CONTEXT_OF_ROOT, getTenantQueueToken } from './tenant-queue.constants';
import { TenantContext } from './core/context/tenant-context';
import { InvalidTenantQueueOptionsError } from './core/errors';
import {
  differingOptions,
  firstUnknownOption,
  unknownOptionWhy,
} from './core/options/option-names';
import { Messages } from './tenant-queue.messages';
import {
  ConfigurableTenantQueueModule,
  TENANT_QUEUE_ASYNC_OPTIONS_TYPE,
  TENANT_QUEUE_MODULE_OPTIONS,
  TENANT_QUEUE_OPTIONS_TYPE,
} from './tenant-queue.module-definition';

/**
 * @internal The names of the features' slices of `forRoot`'s options (the compiler checks the
 * list), for the kernel's refusal of an unknown name; both roots provide it.
 */
export const FEATURE_OPTIONS: Provider = {
  provide: TENANT_QUEUE_FEATURE_OPTIONS,
  useValue: Object.keys({
    scheduler: true,
    guards: true,
    metrics: true,
    directory: true,
    entitlementChecker: true,
    actorPermissionChecker: true,
  } satisfies Record<
    Exclude<keyof (TenantQueueModuleOptions & TenantQueuePortOptions), keyof CoreModuleOptions>,
    true
  >),
};

/** @internal The features that keep nothing in Redis (the testing module brings these). */
export const REDIS_FREE_FEATURES = [TenantGuardsModule, TenantPoolsModule, TenantTelemetryModule];

/** The features `forRoot` brings, each a Nest module plugged into the kernel's seams. */
const DEFAULT_FEATURES = [
  TenantGuardsModule,
  TenantFairnessModule,
  TenantPoolsModule,
  TenantIdempotencyModule,
  TenantDeadLettersModule,
  TenantSchedulerModule,
  TenantMetricsModule,
  TenantTelemetryModule,
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

@Module({})
class TenantQueueFeatureModule {}

/** The provider Nest builds for `forRootAsync`'s options (every form ends in a factory). */
function isOptionsFactory(
  provider: Provider,
): provider is FactoryProvider<unknown> & { useFactory: (...args: unknown[]) => unknown } {
  return (
    typeof provider === 'object' &&
    'provide' in provider &&
    provider.provide === TENANT_QUEUE_MODULE_OPTIONS &&
    'useFactory' in provider
  );
}

/** The class (or token) `forRootAsync`'s `useClass`/`useExisting` names. */
function optionsClassName(options: typeof TENANT_QUEUE_ASYNC_OPTIONS_TYPE): string {
  const type = options.useClass ?? options.useExisting;
  return typeof type === 'function' ? type.name : String(type);
}

/** Every `registerQueue` option name, the kernel's and each feature's (checked by the compiler). */
const QUEUE_OPTION_NAMES = Object.keys({
  name: true,
  tenantScoped: true,
  systemJobs: true,
  defaultJobOptions: true,
  attempts: true,
  backoff: true,
  deadLetterCap: true,
  fairness: true,
  budget: true,
  pools: true,
  routing: true,
} satisfies Record<keyof RegisterTenantQueueOptions, true>);

/** @internal Refuses an unknown `registerQueue` option name, suggesting the one meant. */
export function checkQueueOptionNames(queue: RegisterTenantQueueOptions): void {
  const extra = queue && typeof queue === 'object' && firstUnknownOption(queue, QUEUE_OPTION_NAMES);
  if (!extra) return;
  throw new InvalidTenantQueueOptionsError(
    Messages.invalidOptions(
      `registerQueue(${queue.name}).${extra}`,
      unknownOptionWhy(extra, QUEUE_OPTION_NAMES),
    ),
  );
}

/**
 * Root module: `forRoot(options)` / `forRootAsync(...)` once, next to the app's own
 * `ClsModule.forRoot(...)`; `registerQueue(...)` for each queue a module produces or consumes.
 * @publicApi
 */
@Global()
@Module({
  // ClsModule: the resolution middleware is built in this module's scope.
  imports: [ClsModule, TenantQueueCoreModule.register(), ...DEFAULT_FEATURES],
  providers: [FEATURE_OPTIONS],
  exports: [TenantQueueCoreModule, ...DEFAULT_FEATURES, TENANT_QUEUE_FEATURE_OPTIONS],
})
export class TenantQueueModule extends ConfigurableTenantQueueModule implements NestModule {
  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
    @Inject(TENANT_QUEUE_MODULE_OPTIONS) own: TenantQueueModuleOptions,
    @Inject(TENANT_QUEUE_KERNEL_MODULE_OPTIONS) kernel: TenantQueueModuleOptions,
  ) {
    super();
    // A second forRoot is a module of its own whose options nothing reads: the kernel, global,
    // sees the first. Different options would be dropped without a word.
    if (own !== kernel && !isDeepStrictEqual(own, kernel)) {
      throw new InvalidTenantQueueOptionsError(
        Messages.rootImportedTwice(differingOptions(kernel, own)),
      );
    }
  }

  /** `forRoot` as Nest builds it; given no object (plain JS), the typed error, not a `TypeError`. */
  static forRoot(options: typeof TENANT_QUEUE_OPTIONS_TYPE): DynamicModule {
    if (options === null || typeof options !== 'object') {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidOptions('(root)', Messages.rootOptionsNotObject(options)),
      );
    }
    return super.forRoot(options);
  }

  /**
   * `forRootAsync` as Nest builds it, but an options factory that gives no object (a factory
   * without its return, a class without `createTenantQueueOptions()`) fails with the typed error
   * naming it, not with a `TypeError` from the first provider that reads an option.
   */
  static forRootAsync(options: typeof TENANT_QUEUE_ASYNC_OPTIONS_TYPE): DynamicModule {
    const module = super.forRootAsync(options);
    const source = options.useFactory
      ? 'useFactory'
      : `${optionsClassName(options)}.createTenantQueueOptions()`;
    const checked = (provider: Provider): Provider => {
      if (!isOptionsFactory(provider)) return provider;
      const create = provider.useFactory;
      return {
        ...provider,
        useFactory: async (...args: unknown[]) => {
          const factory = args[0] as { createTenantQueueOptions?: unknown } | undefined;
          if (!options.useFactory && typeof factory?.createTenantQueueOptions !== 'function') {
            throw new InvalidTenantQueueOptionsError(
              Messages.invalidOptions(
                '(root)',
                Messages.asyncOptionsNoMethod(optionsClassName(options)),
              ),
            );
          }
          const given: unknown = await create(...args);
          if (given === null || typeof given !== 'object' || Array.isArray(given)) {
            throw new InvalidTenantQueueOptionsError(
              Messages.invalidOptions('(root)', Messages.asyncOptionsNotObject(source, given)),
            );
          }
          return given;
        },
      };
    };
    return { ...module, providers: module.providers?.map(checked) };
  }

  /** Declares queues; each becomes injectable with `@InjectTenantQueue(name)`. */
  static registerQueue(...queues: RegisterTenantQueueOptions[]): DynamicModule {
    // Both optional: without forRoot, a typed error naming the fix instead of Nest's DI error;
    // without Redis features (the testing module), no consumer check.
    const rootMissing = () =>
      new TenantQueueRootMissingError(Messages.rootModuleMissing(queues.map((q) => q?.name)));
    // One provider a name: two of one token in one module would leave Nest the last alone, so a
    // name given twice here is declared twice to the registry, which refuses other options.
    const byName = new Map<string, RegisterTenantQueueOptions[]>();
    for (const queue of queues)
      byName.set(queue?.name, [...(byName.get(queue?.name) ?? []), queue]);
    const providers: Provider[] = [...byName].map(([name, declarations]) => ({
      provide: getTenantQueueToken(name),
      useFactory: (
        registry?: TenantQueueRegistry,
        consumers?: QueueConsumerCheck,
        failedBoot?: FailedBootCloser,
      ) => {
        if (!registry) throw rootMissing();
        // Refused while Nest builds the providers (a misspelt option, the name declared with other
        // options): no hook runs after that, and the queues built before it hold the connection.
        const declare = () => {
          const created = declarations.map((queue) => {
            checkQueueOptionNames(queue);
            return registry.declareQueue(queue);
          })[0];
          consumers?.expect(created.name);
          return created;
        };
        return failedBoot ? failedBoot.guard(declare) : declare();
      },
      inject: [
        { token: TenantQueueRegistry, optional: true },
        { token: QueueConsumerCheck, optional: true },
        { token: FailedBootCloser, optional: true },
      ],
    }));
    // What the importing module's providers inject from the root, resolved here first: without
    // a root, the typed error instead of Nest's "can't resolve dependencies ... TenantContext".
    providers.push({
      provide: TenantContext,
      useFactory: (context?: TenantContext) => {
        if (!context) throw rootMissing();
        return context;
      },
      inject: [{ token: TENANT_CONTEXT_OF_ROOT, optional: true }],
    });
    return {
      module: TenantQueueFeatureModule,
      providers,
      exports: providers.map((provider) => (provider as { provide: unknown }).provide) as never,
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    mountTenantResolution(consumer, this.options);
  }
}
