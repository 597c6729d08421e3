import { Inject, Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { TenantQueueDefinition } from '../interfaces/register-queue-options.interface';
import { PoolIdLedger } from '../pools/pool-ids.script';
import { EnqueueBound } from '../core/queues/enqueue-bound';
import { JobDispatcher } from '../core/queues/job-dispatcher.interface';
import { JobIdOwners } from '../core/queues/job-id-owners.script';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { TenantQueueTesting } from './tenant-queue-testing';

/** Queues with no Redis behind them: writes go to `TenantQueueTesting`. */
@Injectable()
export class InMemoryTenantQueueRegistry extends TenantQueueRegistry {
  @Inject(TenantQueueTesting) private readonly testing!: TenantQueueTesting;

  protected override createBullQueue(definition: TenantQueueDefinition): Queue {
    return new Proxy({} as Queue, {
      get: (_target, property) => {
        if (property === 'close') return async () => undefined;
        if (property === 'name') return definition.name;
        throw new Error(
          `TenantQueue("${definition.name}").bullQueue.${String(property)} is not available in ` +
            `TenantQueueTestingModule; read jobs from TenantQueueTesting.jobs() instead.`,
        );
      },
    });
  }

  protected override poolIds(): PoolIdLedger | undefined {
    return undefined;
  }

  protected override jobIdOwners(): JobIdOwners | undefined {
    return undefined;
  }

  protected override enqueueBound(): EnqueueBound | undefined {
    return undefined;
  }

  protected override dispatcherFor(definition: TenantQueueDefinition): JobDispatcher {
    return {
      dispatch: async (_queue, jobs) => {
        for (const job of jobs)
          this.testing.record(definition.name, job.opts.jobId, job.name, job.data);
      },
    };
  }
}
