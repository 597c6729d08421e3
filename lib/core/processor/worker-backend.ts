import { Inject, Injectable } from '@nestjs/common';
import type { Processor, Worker, WorkerOptions } from 'bullmq';
import { assertRedisBackend } from '../bullmq';
import { assertConnection } from '../redis/connection-check';
import { workerConnection } from '../redis/worker-connection';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../options/core.options';
import { TenantQueueDefinition } from '../types/queue-definition.interface';
import { TenantWorker } from './tenant-bull-job';
import { TenantProcessorOptions } from './tenant-processor.decorator';

/** What consumes a queue: a BullMQ worker, or the testing module's inline consumer (no worker). */
export interface StartedConsumer {
  /** The BullMQ worker; undefined where there is none (the testing module). */
  worker: Worker | undefined;
  /** Where the consumer's events (`completed`, `failed`, ...) are emitted. */
  events: { on(event: string, listener: (...args: any[]) => void): unknown };
}

/** Starts the consumers of queues: BullMQ on Redis, or the testing module's stand-in. */
export interface TenantWorkerBackend {
  start(
    definition: TenantQueueDefinition,
    processor: Processor,
    options: TenantProcessorOptions,
  ): StartedConsumer;
}

export const TENANT_WORKER_BACKEND = Symbol('TENANT_WORKER_BACKEND');

/** A BullMQ worker per queue (or pool), on the module's connection and prefix. */
@Injectable()
export class BullWorkerBackend implements TenantWorkerBackend {
  constructor(@Inject(TENANT_QUEUE_OPTIONS) private readonly options: ResolvedTenantQueueOptions) {}

  start(
    definition: TenantQueueDefinition,
    processor: Processor,
    options: TenantProcessorOptions,
  ): StartedConsumer {
    assertRedisBackend(definition.name);
    assertConnection(this.options.connection, true);
    const worker = new TenantWorker(definition.name, processor, {
      telemetry: this.options.telemetry,
      ...normaliseKeepJobs(options),
      connection: workerConnection(this.options.connection),
      prefix: definition.bullPrefix,
    });
    return { worker, events: worker };
  }
}

/** bullmq 6.7 mishandles a boolean `removeOnComplete`/`removeOnFail` at worker level. */
function normaliseKeepJobs(options: TenantProcessorOptions): Omit<WorkerOptions, 'connection'> {
  const fix = (value: WorkerOptions['removeOnComplete'] | boolean | undefined) =>
    value === true ? { count: 0 } : value === false ? undefined : value;
  return {
    ...options,
    removeOnComplete: fix(options.removeOnComplete as never),
    removeOnFail: fix(options.removeOnFail as never),
  };
}
