import { Cluster, Redis } from 'ioredis';
import { InvalidTenantQueueOptionsError } from '../errors';
import { assertConnection } from './connection-check';

/** What `assertConnection` throws for `connection` (without workers), or `undefined`. */
function refusal(connection: unknown, blocking = false): unknown {
  try {
    assertConnection(connection, blocking);
  } catch (thrown) {
    return thrown;
  }
  return undefined;
}

describe('assertConnection: a connection that names no Redis server is refused', () => {
  it.each([
    [{ host: '127.0.0.1', port: 6390 }],
    [{ port: 6390 }],
    [{ url: 'redis://127.0.0.1:6390' }],
    [{ path: '/tmp/redis.sock' }],
    [{ sentinels: [{ host: 'a', port: 26379 }], name: 'main' }],
  ])('takes %j', (connection) => {
    expect(() => assertConnection(connection, true)).not.toThrow();
  });

  it.each([
    ['redis://127.0.0.1:6390', /is a string; write \{ url: 'redis:\/\/host:port' \}/],
    [{ uri: 'redis://127.0.0.1:6390' }, /names no Redis server \(keys: uri\).*127\.0\.0\.1:6379/],
    [{}, /names no Redis server \(an empty object\)/],
    [{ maxRetriesPerRequest: null }, /keys: maxRetriesPerRequest/],
    [null, /it is null/],
    [6379, /it is a number/],
    [[], /it is an array/],
  ])('refuses %j, saying what to write', (connection, message) => {
    const error = refusal(connection);
    expect(error).toBeInstanceOf(InvalidTenantQueueOptionsError);
    expect((error as Error).message).toMatch(/^Invalid TenantQueueModule option "connection": /);
    expect((error as Error).message).toMatch(message);
  });

  it('takes an ioredis instance, and refuses one without maxRetriesPerRequest: null for workers', () => {
    const retrying = new Redis({ lazyConnect: true });
    const blocking = new Redis({ lazyConnect: true, maxRetriesPerRequest: null });
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    try {
      expect(() => assertConnection(retrying, false)).not.toThrow();
      expect(() => assertConnection(blocking, true)).not.toThrow();
      expect(() => assertConnection(cluster, true)).not.toThrow();
      expect(() => assertConnection(retrying, true)).toThrow(
        /maxRetriesPerRequest: 20, and BullMQ's workers need null; create it with new IORedis\(url, \{ maxRetriesPerRequest: null \}\)/,
      );
    } finally {
      retrying.disconnect();
      blocking.disconnect();
      cluster.disconnect();
    }
  });
});

describe('assertConnection: an ioredis keyPrefix is refused', () => {
  it('refuses keyPrefix on options, an instance and a Cluster (both places), naming the prefix option', () => {
    const instance = new Redis({
      lazyConnect: true,
      maxRetriesPerRequest: null,
      keyPrefix: 'app:',
    });
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], {
      lazyConnect: true,
      keyPrefix: 'app:',
    });
    const nodes = new Cluster([{ host: '127.0.0.1', port: 1 }], {
      lazyConnect: true,
      redisOptions: { keyPrefix: 'app:' },
    });
    try {
      for (const connection of [
        { host: '127.0.0.1', port: 6390, keyPrefix: 'app:' },
        instance,
        cluster,
        nodes,
      ]) {
        const error = refusal(connection);
        expect(error).toBeInstanceOf(InvalidTenantQueueOptionsError);
        expect((error as Error).message).toMatch(
          /^Invalid TenantQueueModule option "connection": it sets the ioredis keyPrefix "app:".*forRoot\(\{ prefix: 'app' \}\)/,
        );
      }
    } finally {
      instance.disconnect();
      cluster.disconnect();
      nodes.disconnect();
    }
  });
});

describe('assertConnection: a Cluster whose nodes retry requests', () => {
  it('is refused for workers with the Cluster form to write, and taken without them', () => {
    const retrying = new Cluster([{ host: '127.0.0.1', port: 1 }], {
      lazyConnect: true,
      redisOptions: { maxRetriesPerRequest: 5 },
    });
    try {
      expect(() => assertConnection(retrying, false)).not.toThrow();
      const error = refusal(retrying, true);
      expect(error).toBeInstanceOf(InvalidTenantQueueOptionsError);
      expect((error as Error).message).toMatch(
        /maxRetriesPerRequest: 5, and BullMQ's workers need null; create it with new Cluster\(nodes, \{ redisOptions: \{ maxRetriesPerRequest: null \} \}\)/,
      );
    } finally {
      retrying.disconnect();
    }
  });
});
