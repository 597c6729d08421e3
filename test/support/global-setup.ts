import { startRedis, StartedRedis } from './redis-server';

declare global {
  var __TQ_REDIS__: StartedRedis | undefined;
}

/** Starts a private redis-server for the whole run, unless REDIS_URL points at one. */
export default async function globalSetup(): Promise<void> {
  if (process.env.REDIS_URL) return;
  const redis = await startRedis();
  globalThis.__TQ_REDIS__ = redis;
  process.env.REDIS_URL = redis.url;
  process.env.TQ_TEST_OWNS_REDIS = '1';
}
