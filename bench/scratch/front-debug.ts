import Redis from 'ioredis';
import { startRedis } from '../../test/support/redis-server';
import { busy, moduleSide, work } from '../fairness/fairness-harness';
async function main() {
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const r = new Redis(connection);
  const side = await moduleSide(connection, 10, {});
  const starts: string[] = [];
  work.handle = (d: any) => { starts.push(d.tenant); return busy(1); };
  side.run();
  await side.enqueue('A', 2000);
  await new Promise((res) => setTimeout(res, 300));
  const keys = await r.keys('*:bench:wait');
  const base = (await r.keys('*:~fair:state'))[0].replace(':state', '');
  console.log('state', await r.hgetall(base + ':state'), 'ready', await r.zrange(base + ':ready', 0, -1, 'WITHSCORES'));
  const before = starts.length;
  const mon = await r.duplicate().monitor();
  const seen: string[] = [];
  mon.on('monitor', (time: string, args: string[]) => { if (String(args[0]).toLowerCase() === 'evalsha' && String(args[3]).includes('~fair')) seen.push(`${time.slice(-6)} ${String(args[1]).slice(0,6)} n=${args.length} ${args.slice(7, 11).join(',').slice(0, 60)}`); });
  await side.enqueue('B', 10);
  console.log('B enqueued at', (Date.now()/1000).toFixed(6).slice(-6), 'starts since', starts.length - before);
  for (let i = 0; i < 6; i++) {
    const wait = await r.lrange(keys[0], 0, -1);
    const idx = wait.map((id, k) => [id, k] as const).filter(([id]) => id.includes('B') || id.startsWith('tB')).map(([, k]) => k);
    console.log('wait len', wait.length, 'B idx', JSON.stringify(idx), 'sample', wait.slice(-3), 'inf', await r.hgetall(base + ':inf'));
    await new Promise((res) => setTimeout(res, 3));
  }
  await new Promise((res) => setTimeout(res, 500));
  mon.disconnect();
  console.log(seen.slice(0, 40).join('\n'));
  const after = starts.slice(before);
  console.log('starts after B enq', after.slice(0, 60).join(''));
  await side.close();
  process.exit(0);
}
void main();
