import { randomBytes } from 'node:crypto';
import type { ConnectionOptions } from 'bullmq';

/** Host/port/password/db of the test Redis. */
export interface TestRedisOptions {
  host: string;
  port: number;
  password?: string;
  db?: number;
}

/** Connection options for the Redis the harness started (or REDIS_URL). */
export function redisConnection(): TestRedisOptions & ConnectionOptions {
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
