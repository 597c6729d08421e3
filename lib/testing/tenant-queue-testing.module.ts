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
import { TenantQueueModuleOptions } from '../interfaces/tenant-queue-options.interface';
import { TenantQueuePortOptions } from '../interfaces/tenant-queue-ports.interface';
import { PORT_TOKENS, omitPortOptions, portProviders } from '../guards/port-providers';
import { TenantProcessorExplorer } from '../core/processor/tenant-processor.explorer';
import { TENANT_QUEUE_MODULE_OPTIONS } from '../tenant-queue.module-definition';
import {
  TENANT_QUEUE_CORE_EXPORTS,
  TENANT_QUEUE_CORE_PROVIDERS,
  mountTenantResolution,
} from '../tenant-queue.module';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core/core.options';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { InMemoryTenantQueueRegistry } from './in-memory-tenant-queue.registry';
import { InlineProcessorExplorer } from './inline-processor.explorer';
import { TenantQueueTesting } from './tenant-queue-testing';

const REPLACED = new Set<unknown>([TenantQueueRegistry, TenantProcessorExplorer]);

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
      ...TENANT_QUEUE_CORE_PROVIDERS.filter((provider) => !REPLACED.has(provider)),
      {
        provide: TENANT_QUEUE_MODULE_OPTIONS,
        useValue: { connection: {}, ...omitPortOptions(options) },
      },
      ...portProviders(options),
      { provide: TenantQueueRegistry, useClass: InMemoryTenantQueueRegistry },
      { provide: TenantProcessorExplorer, useClass: InlineProcessorExplorer },
      TenantQueueTesting,
    ];
    return {
      module: TenantQueueTestingModule,
      imports: [ClsModule, DiscoveryModule],
      providers,
      exports: [...TENANT_QUEUE_CORE_EXPORTS, ...PORT_TOKENS, TenantQueueTesting],
    };
  }
}
