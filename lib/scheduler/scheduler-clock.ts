import { Injectable } from '@nestjs/common';
import { TenantQueueRedis } from '../core/redis/tenant-queue.redis';

/**
 * The scheduler's notion of "now" (epoch milliseconds). The default reads the Redis server's
 * clock, so instances with skewed clocks agree on what is due. Tests provide their own.
 * @publicApi
 */
export interface SchedulerClock {
  now(): Promise<number>;
}
export const SchedulerClock = Symbol('SchedulerClock');

/** @internal Default clock: Redis `TIME`. */
@Injectable()
export class RedisServerClock implements SchedulerClock {
  constructor(private readonly redis: TenantQueueRedis) {}

  async now(): Promise<number> {
    const [seconds, micros] = await this.redis.client.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }
}
