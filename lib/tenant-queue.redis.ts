import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import IORedis, { Cluster, Redis, RedisOptions } from 'ioredis';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from './tenant-queue.options';

export type RedisClient = Redis | Cluster;

/**
 * The module's own Redis client for its scripts (fairness, schedules, dead letters), opened on
 * first use and closed on shutdown. A client instance passed as `connection` is duplicated, never
 * closed by the module.
 */
@Injectable()
export class TenantQueueRedis implements OnApplicationShutdown {
  private current: RedisClient | undefined;
  private closed = false;

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
  ) {}

  /** The client; throws after shutdown, so late callers never open a connection nobody closes. */
  get client(): RedisClient {
    if (this.closed) throw new Error('TenantQueueRedis is closed (the application has shut down).');
    this.current ??= this.open();
    return this.current;
  }

  private open(): RedisClient {
    const connection = this.options.connection as unknown;
    // Two branches: ioredis 6 types the two `duplicate`s apart.
    if (connection instanceof Redis) return connection.duplicate();
    if (connection instanceof Cluster) return connection.duplicate();
    return new IORedis({
      ...(connection as RedisOptions),
      maxRetriesPerRequest: null,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    const client = this.current;
    this.current = undefined;
    if (client && client.status !== 'end') {
      await client.quit().catch(() => client.disconnect());
    }
  }
}
