import { Cluster, Redis } from 'ioredis';
import { InvalidTenantQueueOptionsError } from '../errors';
import { Messages } from '../../tenant-queue.messages';

/** Keys of ioredis options (or BullMQ's `url`) that say where Redis is. */
const WHERE = ['host', 'port', 'path', 'url', 'sentinels'] as const;

/**
 * Refuses a `connection` that names no Redis server before anything connects: a string, or an
 * options object with none of `host`, `port`, `path`, `url` or `sentinels` (a `{ uri }` typo,
 * an empty object from a missing setting) would make ioredis connect to 127.0.0.1:6379 and the
 * app write its jobs there without a word. With workers (`blocking`), an ioredis instance must
 * have `maxRetriesPerRequest: null` (a Cluster: in its `redisOptions`, or unset), as BullMQ's
 * workers require. An ioredis `keyPrefix` (options, an instance, a Cluster's own or its
 * `redisOptions`) is refused here, as BullMQ refuses it, so the boot names the module's `prefix`
 * instead of failing inside BullMQ's constructor.
 */
export function assertConnection(connection: unknown, blocking: boolean): void {
  const refuse = (why: string) =>
    new InvalidTenantQueueOptionsError(Messages.invalidOptions('connection', why));
  const keyPrefix = keyPrefixOf(connection);
  if (keyPrefix) throw refuse(Messages.connectionKeyPrefix(keyPrefix));
  if (connection instanceof Cluster) {
    // Unset, the nodes' option is BullMQ's to fill; a value other than null it refuses.
    const retries = connection.options.redisOptions?.maxRetriesPerRequest;
    if (blocking && retries !== undefined && retries !== null) {
      throw refuse(Messages.connectionRetries(retries, true));
    }
    return;
  }
  if (connection instanceof Redis) {
    if (blocking && connection.options.maxRetriesPerRequest !== null) {
      throw refuse(Messages.connectionRetries(connection.options.maxRetriesPerRequest));
    }
    return;
  }
  if (typeof connection === 'string') throw refuse(Messages.connectionString());
  if (connection === null || typeof connection !== 'object' || Array.isArray(connection)) {
    throw refuse(Messages.connectionNotObject(connection));
  }
  const options = connection as Record<string, unknown>;
  if (!WHERE.some((key) => options[key] !== undefined)) {
    throw refuse(Messages.connectionNamesNoServer(Object.keys(options)));
  }
}

/** The ioredis `keyPrefix` a connection sets, wherever it sets it. */
function keyPrefixOf(connection: unknown): unknown {
  if (connection instanceof Cluster) {
    return connection.options.keyPrefix || connection.options.redisOptions?.keyPrefix;
  }
  if (connection instanceof Redis) return connection.options.keyPrefix;
  if (connection === null || typeof connection !== 'object') return undefined;
  return (connection as { keyPrefix?: unknown }).keyPrefix;
}
