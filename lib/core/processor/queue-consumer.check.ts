import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { TenantQueueRedis, settlesWithin } from '../redis/tenant-queue.redis';
import type { Queue } from 'bullmq';
import { tenantLogFields } from '../context/tenant-log-fields';
import { TenantQueueLogger } from '../logging/tenant-queue-logger';
import { Messages } from '../../tenant-queue.messages';
import { TenantQueueRegistry } from '../queues/tenant-queue.registry';

/** Worker processes of a split deployment may start a little after the producers. */
export const CONSUMER_CHECK_DELAY_MS = 3000;

/**
 * Warns once per queue (or pool) declared with `registerQueue` that no worker consumes, here or
 * in any process on the same Redis: the usual cause is a `@TenantProcessor` class missing from
 * `providers`, which Nest does not report, and whose jobs would wait for ever.
 */
@Injectable()
export class QueueConsumerCheck implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  private readonly declared = new Set<string>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<string[]>;

  constructor(
    private readonly registry: TenantQueueRegistry,
    private readonly redis: TenantQueueRedis,
  ) {}

  /** @internal Called by `registerQueue` for each queue it declares. */
  expect(queue: string): void {
    this.declared.add(queue);
  }

  onApplicationBootstrap(): void {
    if (this.declared.size === 0) return;
    this.timer = setTimeout(() => {
      this.running = this.check();
    }, CONSUMER_CHECK_DELAY_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.timer);
    if (this.running) await settlesWithin(this.running, this.redis.shutdownMsLeft());
  }

  /** The queues and pools without a worker anywhere, each warned about once. */
  async check(): Promise<string[]> {
    const idle: string[] = [];
    for (const name of this.declared) {
      for (const pool of this.registry.poolsToConsume(name)) {
        if (this.registry.getWorker(pool) || (await this.hasRemoteWorker(pool))) continue;
        idle.push(pool);
        this.logger.warn(
          `${tenantLogFields()} ${Messages.noWorkerForQueue(pool, CONSUMER_CHECK_DELAY_MS / 1000)}`,
        );
      }
    }
    return idle;
  }

  private async hasRemoteWorker(pool: string): Promise<boolean> {
    // CLIENT LIST refused (some managed Redis): no claim either way.
    return ((await workersOn(this.registry.getQueue(pool).bullQueue)) ?? 1) > 0;
  }
}

/**
 * Workers consuming a BullMQ queue in every process on its Redis (BullMQ names each worker's
 * connection; CLIENT LIST finds them); null when Redis refuses CLIENT LIST.
 */
export async function workersOn(queue: Queue): Promise<number | null> {
  try {
    return await queue.getWorkersCount();
  } catch {
    return null;
  }
}
