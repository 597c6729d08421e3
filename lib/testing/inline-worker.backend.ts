import { Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import type { Processor } from 'bullmq';
import { StartedConsumer, TenantWorkerBackend } from '../core/processor/worker-backend';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { TenantQueueTesting } from './tenant-queue-testing';

/** Consumers without BullMQ: each recorded job runs once, inline (`TenantQueueTesting`). */
@Injectable()
export class InlineWorkerBackend implements TenantWorkerBackend {
  constructor(private readonly testing: TenantQueueTesting) {}

  start(definition: TenantQueueDefinition, processor: Processor): StartedConsumer {
    const events = new EventEmitter();
    this.testing.consume(definition.name, processor, events);
    return { worker: undefined, events };
  }
}
