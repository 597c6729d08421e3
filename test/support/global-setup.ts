import { StartedCluster, startRedisCluster } from './redis-cluster';
import { hasRedisServer, startRedis, StartedRedis } from './redis-server';
import { startScriptTrace } from './script-coverage';
import { CLUSTER_NODES_ENV, clusterSwitchOn } from './test-redis';

declare global {
  var __TQ_REDIS__: StartedRedis | undefined;
  var __TQ_CLUSTER__: StartedCluster | undefined;
}

/**
 * Starts a private redis-server for the whole run, unless REDIS_URL points at one. With
 * `TQ_TEST_CLUSTER=1` it starts a private 3-master Redis Cluster instead and lists its nodes in
 * `TQ_REDIS_CLUSTER_NODES`; REDIS_URL then names the first node, so a suite that still opens a
 * plain client fails loudly (MOVED) instead of passing on one server.
 */
export default async function globalSetup(): Promise<void> {
  if (clusterSwitchOn()) {
    if (process.env[CLUSTER_NODES_ENV]) return;
    const cluster = await startRedisCluster();
    globalThis.__TQ_CLUSTER__ = cluster;
    process.env[CLUSTER_NODES_ENV] = cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',');
    process.env.REDIS_URL = `redis://${cluster.nodes[0].host}:${cluster.nodes[0].port}`;
    process.env.TQ_TEST_OWNS_REDIS = '1';
    startScriptTrace();
    return;
  }
  if (process.env.REDIS_URL) return;
  if (!hasRedisServer()) {
    // `npm run test:unit` needs no Redis: its specs skip their few Redis cases without REDIS_URL.
    const projects = selectedProjects(process.argv);
    if (projects.includes('unit') && !projects.includes('e2e')) return;
    throw new Error(
      'These tests need Redis, and redis-server is not installed. Install it (Debian/Ubuntu: ' +
        '"sudo apt-get install -y redis-server", macOS: "brew install redis"), or set ' +
        'REDIS_URL=redis://host:port to a Redis the tests may write to. "npm run test:unit" needs neither.',
    );
  }
  const redis = await startRedis();
  globalThis.__TQ_REDIS__ = redis;
  process.env.REDIS_URL = redis.url;
  process.env.TQ_TEST_OWNS_REDIS = '1';
}

/**
 * The projects of `--selectProjects a b` (or `=a`) on jest's command line, which runs this hook:
 * jest gives the hook no other sign of them.
 */
export function selectedProjects(argv: readonly string[]): string[] {
  const projects: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--selectProjects=')) projects.push(argv[i].split('=')[1]);
    else if (argv[i] === '--selectProjects') {
      while (i + 1 < argv.length && !argv[i + 1].startsWith('-')) projects.push(argv[++i]);
    }
  }
  return projects;
}
