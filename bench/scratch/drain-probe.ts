import Redis from 'ioredis';
import { startRedis } from '../../test/support/redis-server';
import { moduleSide, plainSide, throughput } from '../../bench/fairness/fairness-harness';
async function main() {
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const stats = new Redis(connection);
  const which = (process.env.WHICH ?? 'plain,off,on').split(',');
  for (let r = 0; r < Number(process.env.R ?? 1); r++) {
    for (const w of which) {
      const side = w === 'plain' ? await plainSide(connection, 50) : await moduleSide(connection, 50, w === 'off' ? false : (w === 'tp' ? { priorityByTurn: true } : {}));
      const res = await throughput(side, Number(process.env.T ?? 1000), 20_000, stats, true);
      console.log(w, JSON.stringify({ jps: res.jobsPerSecond, cpu: res.cpuMicrosPerJob, redis: (res as any).redisMicrosPerJob, cmds: (res as any).commandsPerJob }));
    }
  }
  await stats.quit();
  await redis.stop?.();
  process.exit(0);
}
void main();
