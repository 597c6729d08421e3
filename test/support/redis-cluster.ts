import { execFileSync } from 'node:child_process';
import { StartedRedis, startRedis } from './redis-server';

export interface StartedCluster {
  nodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

/**
 * Starts a private 3-master Redis Cluster on free loopback ports (no replicas) and waits until
 * every slot is served. `stop()` shuts every node down.
 */
export async function startRedisCluster(size = 3): Promise<StartedCluster> {
  const servers: StartedRedis[] = [];
  try {
    for (let i = 0; i < size; i++) {
      servers.push(
        await startRedis([
          // Redis's own default node timeout (15 s): the suites add 70,000 jobs in one addBulk,
          // one MULTI that BullMQ keeps atomic and that holds its node for seconds on a loaded
          // 2-core host; at 2 s the other masters marked it failed and the cluster went down.
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${i}.conf`,
          '--cluster-node-timeout',
          '15000',
        ]),
      );
    }
    const addresses = servers.map((s) => `127.0.0.1:${s.port}`);
    execFileSync(
      'redis-cli',
      ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
      {
        stdio: 'pipe',
      },
    );
    await waitForClusterOk(servers.map((s) => s.port));
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    throw error;
  }
  return {
    nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })),
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}

async function waitForClusterOk(ports: number[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const ok = ports.every((port) =>
      execFileSync('redis-cli', ['-p', String(port), 'cluster', 'info'])
        .toString()
        .includes('cluster_state:ok'),
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('Redis Cluster did not reach cluster_state:ok within 20 s');
}
