import { Inject, Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../options/core.options';
import { RedisClient, TenantQueueRedis } from '../redis/tenant-queue.redis';
import { assertRedisBackend } from '../bullmq';
import { workerConnection } from '../redis/worker-connection';
import { EnqueueBound } from './enqueue-bound';
import { JobDispatcher } from './job-dispatcher.interface';
import { JobIdOwners, RedisJobIdOwners } from './job-id-owners.script';
import { TenantQueueDefinition } from '../types/queue-definition.interface';

/**
 * What stands behind the producers: BullMQ on Redis (`RedisQueueBackend`), or the testing
 * module's in-memory stand-in. The registry asks it for each queue's parts.
 */
export interface TenantQueueBackend {
  /** The BullMQ queue of a producer. */
  createQueue(definition: TenantQueueDefinition): Queue;
  /** Writes a queue's jobs: `pipelineDispatcher` (the fair gate's or the direct one), or its own. */
  dispatcherFor(
    definition: TenantQueueDefinition,
    pipelineDispatcher: JobDispatcher,
  ): JobDispatcher;
  /** Who uses each caller-chosen job id; undefined where nothing is kept. */
  jobIdOwners(definition: TenantQueueDefinition): JobIdOwners | undefined;
  /** The bound of every enqueue; undefined where there is no Redis to wait for. */
  enqueueBound(): EnqueueBound | undefined;
  /** The connection features keep their own state on (pools' id ledger); undefined: none. */
  stateClient(): (() => RedisClient) | undefined;
}

export const TENANT_QUEUE_BACKEND = Symbol('TENANT_QUEUE_BACKEND');

/** BullMQ queues on the module's Redis connections. */
@Injectable()
export class RedisQueueBackend implements TenantQueueBackend {
  private bound: EnqueueBound | undefined;

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS) private readonly options: ResolvedTenantQueueOptions,
    private readonly redis: TenantQueueRedis,
  ) {}

  /**
   * On the producer's connection (no offline queue); its outages are logged there, once. Its
   * `opts.connection` then names a worker's connection instead: BullMQ reads it only while it
   * builds the queue, and whatever is built later from `queue.opts` (`@nestjs/bullmq` builds the
   * `@Processor` worker and `@QueueEventsListener` of a `TenantBullMqModule` queue so, an app
   * may build a `Worker` or `QueueEvents` so) must not run on the producer's client. A worker on
   * a client without offline queue spins without yielding when Redis goes away mid-backlog:
   * every fetch fails at once ("Stream isn't writeable"), with an error BullMQ does not take for
   * a connection error, so it fetches again, and the process froze until it ran out of memory.
   */
  createQueue(definition: TenantQueueDefinition): Queue {
    assertRedisBackend(definition.name);
    const queue = new Queue(definition.name, {
      connection: this.redis.producer,
      prefix: definition.bullPrefix,
      telemetry: this.options.telemetry,
    });
    queue.on('error', () => undefined);
    (queue.opts as { connection: unknown }).connection = workerConnection(this.options.connection);
    return queue;
  }

  dispatcherFor(_definition: TenantQueueDefinition, pipeline: JobDispatcher): JobDispatcher {
    return pipeline;
  }

  jobIdOwners(definition: TenantQueueDefinition): JobIdOwners | undefined {
    return new RedisJobIdOwners(definition, () => this.redis.producer);
  }

  enqueueBound(): EnqueueBound | undefined {
    this.bound ??= new EnqueueBound(this.options.enqueueTimeoutMs, () => this.redis.producer);
    return this.bound;
  }

  stateClient(): (() => RedisClient) | undefined {
    return () => this.redis.client;
  }
}
