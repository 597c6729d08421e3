import { Inject, Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { TenantProcessorExplorer } from '../core/processor/tenant-processor.explorer';
import { TenantProcessorOptions } from '../core/processor/tenant-processor.decorator';
import { TenantWorkerHost } from '../core/processor/tenant-worker-host';
import { TenantQueueTesting } from './tenant-queue-testing';

/** Wires each `@TenantProcessor` to `TenantQueueTesting` instead of starting a BullMQ worker. */
@Injectable()
export class InlineProcessorExplorer extends TenantProcessorExplorer {
  @Inject(TenantQueueTesting) private readonly testing!: TenantQueueTesting;

  protected override start(
    host: TenantWorkerHost,
    queueName: string,
    options: TenantProcessorOptions,
  ): void {
    const queue = this.registry.getQueue(queueName);
    const events = new EventEmitter();
    this.bindEvents(host, events);
    this.testing.consume(
      queueName,
      this.runner.createProcessor(host, queue.definition, options),
      events,
    );
  }
}
