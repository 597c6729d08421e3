import Redis from 'ioredis';
import { startRedis } from '../../test/support/redis-server';
import { moduleSide, until, work } from '../fairness/fairness-harness';
async function main() {
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const stats = new Redis(connection);
  const side = await moduleSide(connection, 50, process.env.TP ? { priorityByTurn: true } : {});
  let done = 0;
  work.handle = () => { done++; };
  for (let t = 0; t < 1000; t++) await side.enqueue(`t${t}`, 20);
  await stats.config('SET', 'slowlog-max-len', '1000000');
  await stats.config('SET', 'slowlog-log-slower-than', '0');
  await stats.slowlog('RESET');
  const t0 = performance.now();
  side.run();
  await until(() => done === 20000, 300_000);
  const secs = (performance.now() - t0) / 1000;
  await stats.config('SET', 'slowlog-log-slower-than', '10000');
  const log = (await stats.slowlog('GET', 1000000)) as any[];
  const agg = new Map<string, [number, number, number]>();
  for (const e of log) {
    const args: string[] = e[3];
    let key = String(args[0]).toLowerCase();
    if (key === 'evalsha') key += ':' + String(args[1]).slice(0, 8) + ':' + String(args[3] ?? '').slice(0, 30);
    const a = agg.get(key) ?? [0, 0, 0];
    a[0]++; a[1] += e[2]; a[2] = Math.max(a[2], e[2]);
    agg.set(key, a);
  }
  const gate = log.filter((e) => String(e[3][0]).toLowerCase() === 'evalsha' && String(e[3][3] ?? '').endsWith('~fair'));
  const pts = gate.map((e) => { const a: string[] = e[3]; const last = String(a[a.length - 1]); const m = last.match(/\.\.\. \((\d+) more arguments\)/); const n = m ? a.length - 1 + Number(m[1]) : a.length; return [n, e[2], String(a[1]).slice(0,8)] as [number, number, string]; });
  const bySha = new Map<string, [number, number][]>();
  for (const [n, us, sha] of pts) { const l = bySha.get(sha) ?? []; l.push([n, us]); bySha.set(sha, l); }
  for (const [sha, l] of bySha) {
    const small = l.filter(([n]) => n < 12); const big = l.filter(([n]) => n >= 40);
    const avg = (x: [number, number][]) => x.length ? (x.reduce((s, [, u]) => s + u, 0) / x.length).toFixed(0) : '-';
    const avgN = (x: [number, number][]) => x.length ? (x.reduce((s, [n]) => s + n, 0) / x.length).toFixed(0) : '-';
    console.log('gate sha', sha, 'calls', l.length, 'small(<12 args)', small.length, 'avg us', avg(small), '| big', big.length, 'avg args', avgN(big), 'avg us', avg(big));
  }
  console.log('jobs/s', Math.round(20000 / secs), 'entries', log.length);
  for (const [k, [n, us, mx]] of [...agg].sort((a, b) => b[1][1] - a[1][1]).slice(0, 15)) console.log(k.padEnd(60), 'calls', n, 'avg us', (us / n).toFixed(1), 'max', mx, 'us/job', (us / 20000).toFixed(2));
  await side.close();
  process.exit(0);
}
void main();
