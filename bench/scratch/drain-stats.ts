import Redis from 'ioredis';
import { startRedis } from '../../test/support/redis-server';
import { moduleSide, plainSide, until, work } from '../fairness/fairness-harness';
async function cmdstats(r: Redis) {
  const info = await r.info('commandstats');
  const m = new Map<string, [number, number]>();
  for (const line of info.split('\n')) {
    const x = line.match(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/);
    if (x) m.set(x[1], [Number(x[2]), Number(x[3])]);
  }
  return m;
}
async function main() {
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const stats = new Redis(connection);
  for (const w of (process.env.WHICH ?? 'plain,on').split(',')) {
    const side = w === 'plain' ? await plainSide(connection, 50) : await moduleSide(connection, 50, w === 'off' ? false : {});
    // enqueue happens inside throughput (drain): snapshot around the whole thing minus enqueue is hard; take totals
    let done = 0;
    work.handle = () => { done++; };
    for (let t = 0; t < 1000; t++) await side.enqueue(`t${t}`, 20);
    const before = await cmdstats(stats);
    const t0 = performance.now(); const cpu = process.cpuUsage();
    side.run();
    await until(() => done === 20000, 300_000);
    const used = process.cpuUsage(cpu);
    const res = { jobsPerSecond: Math.round(20000 / ((performance.now() - t0) / 1000)), cpuMicrosPerJob: Math.round((used.user + used.system) / 20000) };
    const after = await cmdstats(stats);
    await side.close();
    const rows: [string, number, number][] = [];
    for (const [k, [c, u]] of after) {
      const [c0, u0] = before.get(k) ?? [0, 0];
      if (c - c0 > 0) rows.push([k, (c - c0) / 20000, (u - u0) / 20000]);
    }
    rows.sort((a, b) => b[2] - a[2]);
    console.log(w, res.jobsPerSecond, 'node cpu', res.cpuMicrosPerJob);
    for (const r of rows.slice(0, 25)) console.log(`  ${r[0].padEnd(20)} calls/job ${r[1].toFixed(3)} usec/job ${r[2].toFixed(2)}`);
  }
  process.exit(0);
}
void main();
