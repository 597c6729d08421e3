import { DynamicModule, Module, Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { InvalidTenantQueueOptionsError, TenantQueueRootMissingError } from '../core/errors';
import { RegisterTenantQueueOptions } from '../interfaces';
import { Messages } from '../tenant-queue.messages';
import { TenantQueueModule } from '../tenant-queue.module';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { FailedBootCloser } from '../core/processor/failed-boot.closer';
import { installProcessorSeam } from './processor-seam';
import { TENANT_BULLMQ_QUEUES, TenantBullMqBridge } from './tenant-bullmq.bridge';

/**
 * Runs existing `@nestjs/bullmq` processors (`@Processor(name)` classes extending `WorkerHost`)
 * on this module's queues, unchanged: put `TenantBullMqModule.registerQueue(...)` where
 * `BullModule.registerQueue(...)` was. Each queue is a tenant queue (`@InjectTenantQueue`) and
 * also `@InjectQueue(name)`'s BullMQ queue, and its `@Processor` jobs run in their tenant's
 * context, with this module's envelope check, job guards, metrics and fair-slot release.
 * @publicApi
 */
@Module({})
export class TenantBullMqModule {
  static registerQueue(...queues: RegisterTenantQueueOptions[]): DynamicModule {
    if (!installProcessorSeam()) {
      throw new InvalidTenantQueueOptionsError(Messages.bullMqSeamMissing());
    }
    const pooled = queues.find((queue) => queue.pools?.length);
    if (pooled) throw new InvalidTenantQueueOptionsError(Messages.bullMqPooledQueue(pooled.name));
    // Without TenantQueueModule.forRoot, the typed error naming the fix, not Nest's DI error.
    const registryOf = (registry?: TenantQueueRegistry) => {
      if (registry) return registry;
      const names = queues.map((queue) => queue?.name);
      throw new TenantQueueRootMissingError(
        Messages.rootModuleMissing(names, 'TenantBullMqModule'),
      );
    };
    const inject = [
      { token: TenantQueueRegistry, optional: true },
      { token: FailedBootCloser, optional: true },
    ];
    // A refusal while the providers are built closes what the module opened (see registerQueue).
    const declare = <T>(failedBoot: FailedBootCloser | undefined, step: () => T) =>
      failedBoot ? failedBoot.guard(step) : step();
    const bullQueues: Provider[] = queues.map((queue) => ({
      provide: getQueueToken(queue.name),
      useFactory: (registry?: TenantQueueRegistry, failedBoot?: FailedBootCloser) =>
        declare(failedBoot, () => registryOf(registry).declareQueue(queue).bullQueue),
      inject,
    }));
    const tenant = TenantQueueModule.registerQueue(...queues);
    return {
      module: TenantBullMqModule,
      // An empty `registerQueue()` brings @nestjs/bullmq's explorer, which starts the workers.
      imports: [DiscoveryModule, BullModule.registerQueue(), tenant],
      providers: [
        ...bullQueues,
        {
          provide: TENANT_BULLMQ_QUEUES,
          useFactory: (registry?: TenantQueueRegistry, failedBoot?: FailedBootCloser) =>
            declare(failedBoot, () =>
              queues.map((queue) => registryOf(registry).declareQueue(queue)),
            ),
          inject,
        },
        TenantBullMqBridge,
      ],
      exports: [...queues.map((queue) => getQueueToken(queue.name)), tenant],
    };
  }
}
