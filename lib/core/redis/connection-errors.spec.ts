import { Cluster } from 'ioredis';
import { EnqueueBound, EnqueueCall } from '../queues/enqueue-bound';
import { createServer } from 'node:net';
import { isRedisConnectionError } from './connection-errors';

/** A loopback port nothing listens on (the OS picked it, then it was closed). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** What a real ioredis `Cluster` with no node to reach rejects a command with. */
async function refusalOf(options: { enableOfflineQueue: boolean }): Promise<Error> {
  const port = await closedPort();
  const cluster = new Cluster([{ host: '127.0.0.1', port }], {
    ...options,
    clusterRetryStrategy: () => null,
    redisOptions: { maxRetriesPerRequest: 0 },
  });
  cluster.on('error', () => undefined);
  try {
    return await cluster.get('k').then(
      () => new Error('answered'),
      (error: Error) => error,
    );
  } finally {
    cluster.disconnect();
  }
}

describe('isRedisConnectionError on a Redis Cluster', () => {
  // A Cluster that never connected keeps its sharded subscribers' retry (ioredis's
  // ClusterSubscriberGroup, 2 s at most) after disconnect(): let it run out before the file ends.
  afterAll(() => new Promise((resolve) => setTimeout(resolve, 2_100)));

  it('takes a Cluster that is not ready (offline queue off) for Redis away, the write unsent', async () => {
    const refused = await refusalOf({ enableOfflineQueue: false });
    expect(refused.message).toMatch(/^Cluster isn't ready/);
    expect(isRedisConnectionError(refused)).toBe(true);
    // The enqueue's first write refused before it left: nothing reached Redis.
    const call = new EnqueueCall(
      new EnqueueBound(1000, () => undefined),
      'q',
      Date.now(),
      undefined,
    );
    call.send();
    expect(call.unavailable(refused.message, refused).written).toBe(false);
  });

  it('takes a Cluster whose nodes are all unreachable for Redis away', async () => {
    const refused = await refusalOf({ enableOfflineQueue: true });
    expect(refused.message).toBe('None of startup nodes is available');
    expect(isRedisConnectionError(refused)).toBe(true);
  });

  it('leaves command and script errors to their callers', () => {
    expect(isRedisConnectionError(new Error('ERR unknown command'))).toBe(false);
    expect(
      isRedisConnectionError(new Error('CROSSSLOT Keys in request do not hash to the same slot')),
    ).toBe(false);
  });
});
