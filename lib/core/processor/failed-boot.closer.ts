import { Injectable, Optional } from '@nestjs/common';
import { TenantQueueRedis } from '../redis/tenant-queue.redis';
import { QueueSettingsCheck } from '../queues/queue-settings.check';
import { QueueConsumerCheck } from './queue-consumer.check';
import { TenantWorkerLauncher } from './worker-launcher';

/**
 * Closes what the module opened when one of its own boot steps refuses the app. Nest runs no
 * shutdown hook after a failed init, and the producer's connection is open from the moment the
 * queues are built: left open, it kept a process whose app caught the error alive for good
 * (reconnecting to a Redis that is down, or connected to one that is up).
 */
@Injectable()
export class FailedBootCloser {
  constructor(
    private readonly launcher: TenantWorkerLauncher,
    private readonly redis: TenantQueueRedis,
    @Optional() private readonly consumers?: QueueConsumerCheck,
    @Optional() private readonly settings?: QueueSettingsCheck,
  ) {}

  /** Runs `step`; if it throws, closes the workers, the checks' timers and the clients, then throws. */
  async guard<T>(step: () => T | Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      // In Nest's shutdown order, each within the shutdown bound; the queues share the clients.
      await this.launcher.beforeApplicationShutdown();
      await this.consumers?.onApplicationShutdown();
      await this.settings?.onApplicationShutdown();
      await this.redis.onApplicationShutdown();
      throw error;
    }
  }
}
