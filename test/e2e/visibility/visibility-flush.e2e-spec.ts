import { bucketOf } from '../../../lib/metrics/lag-buckets';
import { MetricSeries } from '../../../lib/metrics/metric-series';
import { QueueVisibility } from '../../../lib/metrics/visibility-batch';
import { VisibilityKeys } from '../../../lib/metrics/visibility-keys';
import { uniquePrefix } from '../../support/redis-url';
import { TestRedisClient, openRedis } from '../../support/test-redis';

const series: MetricSeries = {
  lag: () => undefined,
  runTime: () => undefined,
  plain: () => undefined,
  reasoned: () => undefined,
};

// Ids a key must survive: separators, a hash tag, an escape, spaces, non-ASCII.
const HOSTILE = ['a:b', 'x{y}z', 'p%20q', ' sp ace ', 'ünï-tenant', 'm:1:2'];
const TTL = 3720;

describe('the visibility flush: every tenant counted, one script call per chunk of tenants', () => {
  let redis: TestRedisClient;
  let keys: VisibilityKeys;

  beforeAll(() => {
    redis = openRedis();
  });
  beforeEach(() => {
    keys = new VisibilityKeys({ name: 'q', bullPrefix: `{${uniquePrefix('vf')}}` } as never);
  });
  afterAll(async () => {
    await redis.quit();
  });

  it("adds two processes' counts of 1,200 tenants (chunks of 500) to the totals, minutes and zset", async () => {
    const tenants = [...HOSTILE, ...Array.from({ length: 1194 }, (_, i) => `t${i}`)];
    const now = Date.now();
    const minute = Math.floor(now / 60_000);
    const second = Math.floor(now / 1000) % 60;
    const producer = new QueueVisibility(keys, () => series);
    const worker = new QueueVisibility(keys, () => series);
    for (const tenant of tenants) {
      producer.record(tenant).enqueue(now, false);
      producer.record(tenant).enqueue(now, false);
      producer.record(tenant).enqueue(now, true);
      worker.record(tenant).firstStart(now, 5);
      worker.record(tenant).result(now, 0);
    }
    await producer.flush(redis as never, now, TTL);
    await worker.flush(redis as never, now, TTL);
    expect(producer.empty && worker.empty).toBe(true);

    const totals = await redis.hgetall(keys.totals);
    expect(Object.keys(totals)).toHaveLength(2 * tenants.length);
    for (const tenant of tenants) {
      expect([totals[`${tenant}|enq`], totals[`${tenant}|started`]]).toEqual(['3', '1']);
      const hash = await redis.hgetall(keys.minute(tenant, minute));
      // Delayed jobs count in the totals but not in the enqueue rate.
      expect(hash).toEqual({ [`b${bucketOf(5)}`]: '1', completed: '1', [`e${second}`]: '2' });
    }
    for (const tenant of HOSTILE) {
      const ttl = await redis.ttl(keys.minute(tenant, minute));
      expect(ttl).toBeGreaterThan(TTL - 60);
      expect(ttl).toBeLessThanOrEqual(TTL);
    }
    expect(await redis.zcard(keys.tenants)).toBe(tenants.length);
    expect(Number(await redis.zscore(keys.tenants, HOSTILE[1]))).toBe(now);

    // A second flush adds to what is there.
    worker.record('a:b').result(now, 1);
    worker.record('a:b').result(now, 1);
    await worker.flush(redis as never, now, TTL);
    expect(await redis.hget(keys.minute('a:b', minute), 'failed')).toBe('2');
    expect(await redis.hget(keys.minute('a:b', minute), 'completed')).toBe('1');
  });

  it('writes a minute a record left behind and its current one; totals alone write no minute', async () => {
    const visibility = new QueueVisibility(keys, () => series);
    const start = Math.floor(Date.now() / 60_000) * 60_000;
    const record = visibility.record('acme');
    record.firstStart(start + 1_000, 10);
    record.result(start + 61_000, 2);
    visibility.record('quiet').enqueue(start + 2_000, true);
    await visibility.flush(redis as never, start + 61_000, TTL);

    const first = start / 60_000;
    expect(await redis.hgetall(keys.minute('acme', first))).toEqual({ [`b${bucketOf(10)}`]: '1' });
    expect(await redis.hgetall(keys.minute('acme', first + 1))).toEqual({ timed_out: '1' });
    expect(await redis.ttl(keys.minute('acme', first))).toBeGreaterThan(0);
    expect(await redis.hgetall(keys.totals)).toEqual({
      'acme|started': '1',
      'quiet|enq': '1',
    });
    expect(await redis.exists(keys.minute('quiet', first))).toBe(0);
  });

  it('bounds each call by its arguments when records are large (a producer counting 40 seconds)', async () => {
    const visibility = new QueueVisibility(keys, () => series);
    const start = Math.floor(Date.now() / 60_000) * 60_000;
    visibility.record('warm').result(start, 0);
    await visibility.flush(redis as never, start, TTL);
    // The script's command, defined on the client by the first flush: watched, not replaced.
    const client = redis as unknown as { tqVisFlush(...args: unknown[]): Promise<number> };
    const defined = client.tqVisFlush;
    const sizes: number[] = [];
    client.tqVisFlush = function (this: unknown, ...args: unknown[]) {
      sizes.push(args.length);
      return defined.apply(this, args);
    };
    try {
      for (let t = 0; t < 300; t++) {
        for (let second = 0; second < 40; second++) {
          visibility.record(`t${t}`).enqueue(start + second * 1000, false);
        }
      }
      await visibility.flush(redis as never, start + 40_000, TTL);
    } finally {
      client.tqVisFlush = defined;
    }
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...sizes)).toBeLessThan(10_200);
    for (const tenant of ['t0', 't150', 't299']) {
      const hash = await redis.hgetall(keys.minute(tenant, start / 60_000));
      expect(Object.keys(hash)).toHaveLength(40);
      expect(new Set(Object.values(hash))).toEqual(new Set(['1']));
      expect(await redis.hget(keys.totals, `${tenant}|enq`)).toBe('40');
    }
  });

  it("sets a tenant-minute hash's TTL when it makes the hash, and not on later adds to its fields", async () => {
    const visibility = new QueueVisibility(keys, () => series);
    const now = Date.now();
    const minute = Math.floor(now / 60_000);
    const key = keys.minute('x{y}z', minute);
    visibility.record('x{y}z').result(now, 0);
    await visibility.flush(redis as never, now, TTL);
    expect(await redis.ttl(key)).toBeGreaterThan(TTL - 60);
    // Later flushes that only add to its fields leave the TTL as it is (here lowered by hand)...
    await redis.expire(key, 100);
    visibility.record('x{y}z').result(now, 0);
    await visibility.flush(redis as never, now, TTL);
    expect(await redis.hget(key, 'completed')).toBe('2');
    expect(await redis.ttl(key)).toBeLessThanOrEqual(100);
    // ... a new field sets it again ...
    visibility.record('x{y}z').result(now, 1);
    await visibility.flush(redis as never, now, TTL);
    expect(await redis.ttl(key)).toBeGreaterThan(TTL - 60);
    // ... and a hash gone before the minute ended is made again with its TTL.
    await redis.del(key);
    visibility.record('x{y}z').result(now, 0);
    await visibility.flush(redis as never, now, TTL);
    expect(await redis.hgetall(key)).toEqual({ completed: '1' });
    expect(await redis.ttl(key)).toBeGreaterThan(TTL - 60);
  });

  it('applies a call sent again after its reply was lost once (ioredis resends it on reconnect)', async () => {
    const visibility = new QueueVisibility(keys, () => series);
    const now = Date.now();
    const minute = Math.floor(now / 60_000);
    visibility.record('warm').result(now, 0);
    await visibility.flush(redis as never, now, TTL);
    const client = redis as unknown as { tqVisFlush(...args: unknown[]): Promise<number> };
    const defined = client.tqVisFlush;
    const sent: unknown[][] = [];
    client.tqVisFlush = function (this: unknown, ...args: unknown[]) {
      sent.push(args);
      return defined.apply(this, args);
    };
    try {
      visibility.record('a:b').firstStart(now, 5);
      visibility.record('a:b').result(now, 0);
      await visibility.flush(redis as never, now, TTL);
    } finally {
      client.tqVisFlush = defined;
    }
    expect(sent).toHaveLength(1);
    // The same call again, as ioredis resends it: nothing added.
    expect(await defined.apply(redis, sent[0])).toBe(0);
    expect(await redis.hget(keys.totals, 'a:b|started')).toBe('1');
    expect(await redis.hgetall(keys.minute('a:b', minute))).toEqual({
      [`b${bucketOf(5)}`]: '1',
      completed: '1',
    });
    // The writer's next call is applied, and another writer's numbers are its own.
    visibility.record('a:b').result(now, 0);
    await visibility.flush(redis as never, now, TTL);
    const other = new QueueVisibility(keys, () => series);
    other.record('a:b').result(now, 0);
    await other.flush(redis as never, now, TTL);
    expect(await redis.hget(keys.minute('a:b', minute), 'completed')).toBe('3');
  });

  it('drops tenants idle for a day from the zset', async () => {
    const now = Date.now();
    await redis.zadd(keys.tenants, now - 2 * 86_400_000, 'gone', now - 3_600_000, 'recent');
    const visibility = new QueueVisibility(keys, () => series);
    for (let i = 0; i < 700; i++) visibility.record(`t${i}`).result(now, 0);
    await visibility.flush(redis as never, now, TTL);
    expect(await redis.zscore(keys.tenants, 'gone')).toBeNull();
    expect(await redis.zscore(keys.tenants, 'recent')).not.toBeNull();
    expect(await redis.zcard(keys.tenants)).toBe(701);
  });

  it("drops the reconcile views of tenants idle for a day with them, and keeps an active tenant's", async () => {
    const now = Date.now();
    const dayAgo = now - 2 * 86_400_000;
    // Views the reconcile left while a tenant's counters disagreed for a moment (enqueue counts
    // flushed before start counts); once they agree again nothing reads them back.
    await redis.zadd(keys.tenants, dayAgo, 'gone', dayAgo, 'x{y}z', now, 'recent');
    await redis.hset(keys.reconcile, {
      gone: `${dayAgo}:1:0:0`,
      'x{y}z': `${dayAgo}:3:1:1`,
      recent: `${now}:1:0:0`,
    });
    const visibility = new QueueVisibility(keys, () => series);
    visibility.record('busy').result(now, 0);
    await visibility.flush(redis as never, now, TTL);
    expect(await redis.hgetall(keys.reconcile)).toEqual({ recent: `${now}:1:0:0` });
  });

  it('drops the totals of tenants idle for a day that show no backlog, and keeps every backlog', async () => {
    const now = Date.now();
    const dayAgo = now - 2 * 86_400_000;
    const idle = Array.from({ length: 1500 }, (_, i) => `idle-${i}`);
    await redis.zadd(
      keys.tenants,
      ...idle.flatMap((t) => [dayAgo, t]),
      dayAgo,
      'waits',
      dayAgo,
      'a:b',
    );
    await redis.hset(keys.totals, {
      ...Object.fromEntries(
        idle.flatMap((t) => [
          [`${t}|enq`, '5'],
          [`${t}|started`, '5'],
        ]),
      ),
      'waits|enq': '7',
      'waits|started': '4',
      'a:b|enq': '2',
      'a:b|started': '2',
      'busy|enq': '9',
      'busy|started': '9',
    });
    const visibility = new QueueVisibility(keys, () => series);
    visibility.record('busy').result(now, 0);
    await visibility.flush(redis as never, now, TTL);
    // At most 1,000 idle tenants a call: the next flush takes the rest.
    expect(await redis.zcard(keys.tenants)).toBe(1 + 1502 - 1000);
    visibility.record('busy').result(now, 0);
    await visibility.flush(redis as never, now, TTL);
    expect(await redis.zrange(keys.tenants, '0', '-1')).toEqual(['busy']);
    expect(await redis.hgetall(keys.totals)).toEqual({
      'waits|enq': '7',
      'waits|started': '4',
      'busy|enq': '9',
      'busy|started': '9',
    });
    // A count a process adds later starts from 0: the backlog it gives is the same.
    visibility.record('a:b').enqueue(now, false);
    await visibility.flush(redis as never, now, TTL);
    expect(await redis.hmget(keys.totals, 'a:b|enq', 'a:b|started')).toEqual(['1', null]);
  });
});
