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
import { TenantQueuePortOptions } from '../guards/tenant-queue-ports.interface';
import { PORT_TOKENS, omitPortOptions, portProviders } from '../guards/port-providers';
import { TENANT_WORKER_BACKEND } from '../core/processor/worker-backend';
import { TENANT_QUEUE_MODULE_OPTIONS } from '../tenant-queue.module-definition';
import {
  TENANT_QUEUE_CORE_EXPORTS,
  TENANT_QUEUE_CORE_PROVIDERS,
  mountTenantResolution,
} from '../tenant-queue.module';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core/core.options';
import { TENANT_QUEUE_BACKEND } from '../core/queues/queue-backend';
import { InMemoryQueueBackend } from './in-memory-queue.backend';
import { InlineWorkerBackend } from './inline-worker.backend';
import { TenantQueueTesting } from './tenant-queue-testing';

/** The kernel's two backends (producers' and consumers'), swapped for in-memory ones. */
const SWAPPED = new Set<unknown>([TENANT_QUEUE_BACKEND, TENANT_WORKER_BACKEND]);
const isSwapped = (provider: Provider) =>
  typeof provider === 'object' && 'provide' in provider && SWAPPED.has(provider.provide);

/**
 * Stands in for `TenantQueueModule.forRoot()` in your tests: no Redis. `registerQueue` queues
 * record what is enqueued (`TenantQueueTesting.jobs()`), and `@TenantProcessor`s run those jobs
 * once, inline, through the real runner: same tenant context, envelope checks and job guards.
 * Features that keep state in Redis (fair share, schedules, dead letters) need the real module.
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
      ...TENANT_QUEUE_CORE_PROVIDERS.filter((provider) => !isSwapped(provider)),
      {
        provide: TENANT_QUEUE_MODULE_OPTIONS,
        useValue: { connection: {}, ...omitPortOptions(options) },
      },
      ...portProviders(options),
      { provide: TENANT_QUEUE_BACKEND, useClass: InMemoryQueueBackend },
      { provide: TENANT_WORKER_BACKEND, useClass: InlineWorkerBackend },
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
