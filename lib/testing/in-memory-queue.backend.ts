import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { JobDispatcher } from '../core/queues/job-dispatcher.interface';
import { hasCallerJobId } from '../core/queues/tenant-queue';
import { InMemoryJobIdOwners } from './in-memory-job-id-owners';
import { TenantQueueBackend } from '../core/queues/queue-backend';
import { TenantQueueTesting } from './tenant-queue-testing';

/** What Nest reads off a provider's value, which the in-memory queue does not have. */
const NOT_THERE = new Set([
  'then',
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

/** Queues with no Redis behind them: writes go to `TenantQueueTesting`. */
@Injectable()
export class InMemoryQueueBackend implements TenantQueueBackend {
  constructor(private readonly testing: TenantQueueTesting) {}

  createQueue(definition: TenantQueueDefinition): Queue {
    return new Proxy({} as Queue, {
      get: (target, property) => {
        if (property === 'close') return async () => undefined;
        if (property === 'name') return definition.name;
        // What TenantBullMqModule keys its queues by (no Redis prefix: nothing is written).
        if (property === 'qualifiedName') return `in-memory:${definition.name}`;
        // Not a promise and no lifecycle hooks: Nest awaits a factory's value (an @InjectQueue
        // token) and looks for hooks on it; symbols are read by inspection (util.inspect, jest).
        if (typeof property === 'symbol' || NOT_THERE.has(property)) return undefined;
        // Any object's own members (`constructor`, `toString`...), which Nest's discovery reads.
        if (property in target) return Reflect.get(target, property);
        throw new Error(
          `TenantQueue("${definition.name}").bullQueue.${String(property)} is not available in ` +
            `TenantQueueTestingModule; read jobs from TenantQueueTesting.jobs() instead.`,
        );
      },
    });
  }

  dispatcherFor(definition: TenantQueueDefinition): JobDispatcher {
    return {
      dispatch: async (_queue, jobs) => {
        for (const job of jobs) {
          // The same tenant repeating its own id: a harmless duplicate, as in BullMQ.
          if (hasCallerJobId(job) && this.testing.has(definition.name, job.opts.jobId)) continue;
          this.testing.record(definition.name, job.opts.jobId, job.name, job.data, job.opts);
        }
      },
    };
  }

  jobIdOwners(definition: TenantQueueDefinition): InMemoryJobIdOwners {
    return new InMemoryJobIdOwners(this.testing.jobIdsOf(definition.name));
  }

  enqueueBound(): undefined {
    return undefined;
  }

  stateClient(): undefined {
    return undefined;
  }
}
