import type { ConnectionOptions } from 'bullmq';
import IORedis, { Cluster, Redis } from 'ioredis';
import { redisConnection } from './redis-url';

/** Set by the jest globalSetup in cluster mode: `host:port,host:port,...` of the masters. */
export const CLUSTER_NODES_ENV = 'TQ_REDIS_CLUSTER_NODES';

export type TestRedisClient = Redis | Cluster;

/** `TQ_TEST_CLUSTER=1` (what `npm run test:cluster` sets) runs the suites on Redis Cluster. */
export function clusterSwitchOn(): boolean {
  return process.env.TQ_TEST_CLUSTER === '1';
}

/** The cluster nodes of this run, or `undefined` on a single redis-server. */
export function clusterNodes(): { host: string; port: number }[] | undefined {
  const list = process.env[CLUSTER_NODES_ENV];
  if (!list) return undefined;
  return list.split(',').map((node) => {
    const [host, port] = node.split(':');
    return { host, port: Number(port) };
  });
}

export function isClusterRun(): boolean {
  return clusterNodes() !== undefined;
}

const opened = new Set<TestRedisClient>();

/**
 * The `connection` to give `TenantQueueModule.forRoot`: plain options on a single server, an
 * ioredis `Cluster` in cluster mode (closed after the test file, since the module and BullMQ
 * never close a client instance they were given).
 */
export function testConnection(): ConnectionOptions {
  const nodes = clusterNodes();
  if (!nodes) return redisConnection();
  const cluster = new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } });
  opened.add(cluster);
  return cluster;
}

/** A raw client of the test Redis (`Cluster` in cluster mode). The caller quits it. */
export function openRedis(): TestRedisClient {
  const nodes = clusterNodes();
  if (nodes) return new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } });
  return new IORedis({ ...redisConnection(), maxRetriesPerRequest: null });
}

/** Quits every connection `testConnection()` opened. Runs after each test file on its own. */
export async function closeTestConnections(): Promise<void> {
  const clients = [...opened];
  opened.clear();
  await Promise.all(
    clients
      .filter((client) => client.status !== 'end')
      .map((client) => client.quit().catch(() => client.disconnect())),
  );
}

// A root-level hook of every test file that imports this helper: it runs after the file's own
// afterAll hooks (which close the apps), so the clients are idle by then. Forked fixtures have
// no jest globals and exit on their own.
if (typeof afterAll === 'function') afterAll(closeTestConnections);
