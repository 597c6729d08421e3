import { Cluster, Redis, RedisOptions } from 'ioredis';
import { ResolvedTenantQueueOptions } from '../options/core.options';
import { reconnectSoon } from './tenant-queue.redis';

/**
 * A worker's connection (the module's own workers', and what `queue.opts` hands a consumer built
 * from a tenant queue, see `RedisQueueBackend.createQueue`): options get the module's reconnect
 * strategy (within 2 s of Redis coming back) unless they set their own. BullMQ's default for
 * connections it opens backs off to 20 s, so after a 40 s outage the workers sat idle 18 s while
 * producers were writing again. An ioredis instance is used as it is (BullMQ duplicates it,
 * strategy included).
 */
export function workerConnection(
  connection: ResolvedTenantQueueOptions['connection'],
): ResolvedTenantQueueOptions['connection'] {
  if (connection instanceof Redis || connection instanceof Cluster) return connection;
  const options = connection as RedisOptions;
  return options.retryStrategy ? connection : { ...options, retryStrategy: reconnectSoon };
}
