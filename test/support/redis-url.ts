import { randomBytes } from 'node:crypto';

/** Host/port/password/db of the test Redis. */
export interface TestRedisOptions {
  host: string;
  port: number;
  password?: string;
  db?: number;
}

/**
 * Connection options for the Redis the harness started (or REDIS_URL): plain options, which both
 * BullMQ majors take as `connection` and ioredis as its options (bullmq 5's `ConnectionOptions`
 * also admits an ioredis instance, which cannot be spread into `new IORedis({...})`).
 */
export function redisConnection(): TestRedisOptions {
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    password: url.password || undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined,
  };
}

/** A key prefix unique to one test, so tests never share or flush each other's keys. */
export function uniquePrefix(label = 't'): string {
  return `${label}${randomBytes(4).toString('hex')}`;
}
