import type { ChildProcess } from 'node:child_process';
import type { TenantFairnessOptions } from '../../../lib';
import { ask, forkFixture, killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

let redis: TestRedisClient;
const children: ChildProcess[] = [];
beforeAll(() => {
  redis = openRedis();
});
afterAll(async () => {
  await killAll(children);
  redis.disconnect();
});

const BASE = { defaultConcurrency: 1, tickMs: 200 };
const PER_TENANT = 6;

/** Each mode of the gate: its name, its queue, its options, the most of a tenant at once. */
const MODES: [string, string, TenantFairnessOptions, number][] = [
  ['a rate limit', 'rate', { ...BASE, defaultConcurrency: 2, rateLimit: { max: 5, per: 1000 } }, 2],
  ['floors', 'floors', { ...BASE, defaultMinConcurrency: 1 }, 1],
  ['fair keys', 'keys', { ...BASE, fairKey: 'job' }, 1],
  ['lanes', 'lanes', { ...BASE, lanes: { a: { share: 0.5 }, b: { share: 0.5 } } }, 1],
  ['time share', 'time', { ...BASE, share: 'time' }, 1],
];

/**
 * A worker process SIGKILLed mid-job under each mode of the gate, beside a second one (both of
 * concurrency 2, two tenants of 6 jobs each, cap 1): every job runs, never two of a tenant at once
 * (its killed job, run again by BullMQ's stall check, counts once), nothing stays held; with a
 * rate limit, the jobs the gate admitted start within the limit across the kill. The modes run
 * at once, a queue each in the same two processes, and the one killed runs a job of every queue:
 * it starts first, its first jobs wait (on a key the test sets after the kill) until the second
 * process is up beside it, then it is killed.
 */
describe('a worker killed mid-job under each mode at once (a queue each)', () => {
  const prefix = uniquePrefix('km');
  const rec = (queue: string) => `{${prefix}:rec:${queue}}`;
  const starts = async (queue: string) =>
    (await redis.lrange(`${rec(queue)}:starts`, 0, -1)).map((line) => line.split(' '));
  let killedPid = '';

  beforeAll(async () => {
    const queues = JSON.stringify(
      Object.fromEntries(MODES.map(([, q, fairness]) => [q, fairness])),
    );
    const env = { TQ_PREFIX: prefix, TQ_QUEUES: queues, TQ_CONCURRENCY: '2' };
    const doomed = await forkFixture('layout-worker.ts', env, children);
    // Every queue's jobs at once (the adds run side by side in the process): the rate-limited
    // ones (150 ms, at most 5 a second a tenant) and the others (400 ms, one at a time a
    // tenant). Each job, once started, waits for `go`: the doomed process holds its first jobs
    // of every queue until the kill.
    const go = `${prefix}:go`;
    const adds = MODES.flatMap(([, queue]) =>
      (
        [
          ['t1', 0],
          ['t2', 100],
        ] as const
      ).map(([tenant, from]) => ({
        add: PER_TENANT,
        tenant,
        ms: queue === 'rate' ? 150 : 400,
        from,
        queue,
        gate: go,
      })),
    );
    let left = adds.length;
    await new Promise<void>((resolve) => {
      doomed.on('message', (message) => message === 'added' && --left === 0 && resolve());
      for (const add of adds) doomed.send(add);
    });
    const running = async (queue: string) => {
      const finished = await redis.hgetall(`${rec(queue)}:done`);
      return (await starts(queue)).filter(([, id]) => !finished[id]).map((s) => s[3]);
    };
    await waitFor(
      async () =>
        (await Promise.all(MODES.map(([, q]) => running(q)))).every((pids) =>
          pids.includes(String(doomed.pid)),
        ),
      'the first process running a job of every queue',
    );
    // The second process, up beside it, takes what the caps leave; then the first is killed
    // mid-job, and every job goes on.
    await forkFixture('layout-worker.ts', env, children);
    killedPid = String(doomed.pid);
    doomed.kill('SIGKILL');
    await new Promise((resolve) => doomed.once('exit', resolve));
    await redis.set(go, '1');
    const done = async (queue: string) => await redis.hlen(`${rec(queue)}:done`);
    await waitFor(
      async () =>
        (await Promise.all(MODES.map(([, q]) => done(q)))).every((n) => n === 2 * PER_TENANT),
      'every job run',
      20_000,
    );
  }, 120_000);

  describe.each(MODES)('a worker killed mid-job under %s', (_name, queue, fairness, cap) => {
    it('runs every job, within the cap and the limit', async () => {
      const all = await starts(queue);
      const max = await redis.hgetall(`${rec(queue)}:max`);
      expect([Number(max.t1) <= cap, Number(max.t2) <= cap]).toEqual([true, true]);
      // Every job started.
      expect(new Set(all.map(([, id]) => id)).size).toBe(2 * PER_TENANT);
      // The killed process ended none of its jobs (each waited for `go`): each ran again in the
      // other.
      const killed = all.filter((s) => s[3] === killedPid).map(([, id]) => id);
      const again = all.filter((s) => s[3] !== killedPid).map(([, id]) => id);
      expect(killed.length).toBeGreaterThan(0);
      expect(killed.filter((id) => !again.includes(id))).toEqual([]);
      const q = `{${prefix}:${queue}}`;
      expect(await redis.zcount(`${q}:${queue}:delayed`, 9007199254736896, '+inf')).toBe(0);
      expect(await redis.hlen(`${q}:~fair:inf`)).toBe(0);
      if (!('rateLimit' in fairness)) return;
      // First starts of each tenant: at most burst (1) + elapsed / 200 ms + 1 in any stretch (the
      // documented late wake-up), + 1 for the worker's own pick-up lag after admission.
      for (const tenant of ['t1', 't2']) {
        const seen = new Set<string>();
        const times = all
          .filter(([t, id]) => t === tenant && !seen.has(id) && seen.add(id))
          .map(([, , at]) => Number(at))
          .sort((a, b) => a - b);
        const over: string[] = [];
        for (let i = 0; i < times.length; i++) {
          for (let j = i + 1; j < times.length; j++) {
            const within = times[j] - times[i];
            if (j - i + 1 > 3 + within / 200) over.push(`${j - i + 1} starts in ${within} ms`);
          }
        }
        expect({ tenant, starts: times.length, over }).toEqual({
          tenant,
          starts: PER_TENANT,
          over: [],
        });
      }
    });
  });
});

/**
 * A producer process SIGKILLed in the middle of its addBulk calls over 40 tenants (batches of
 * 50, cap 1, so the jobs are held in the gate): what Redis holds is whole batches, each job held
 * in BullMQ's delayed set is in its tenant's backlog and the backlogs count no other, and a
 * worker started afterwards runs every job written.
 */
describe('a producer killed in the middle of addBulk', () => {
  it('leaves whole batches, held and counted alike, all run afterwards', async () => {
    const prefix = uniquePrefix('kb');
    const producer = await forkFixture(
      'layout-worker.ts',
      { TQ_PREFIX: prefix, TQ_FAIRNESS: JSON.stringify(BASE), TQ_CONCURRENCY: '0' },
      children,
    );
    expect(await ask(producer, { bulk: 50, tenants: 40, ms: 2 })).toBe('adding');
    const added = async () => Number(await redis.get(`{${prefix}:rec}:added`));
    await waitFor(async () => (await added()) >= 1000, '1,000 jobs added');
    producer.kill('SIGKILL');
    await new Promise((resolve) => producer.once('exit', resolve));
    const q = `{${prefix}:fair}:fair`;
    const held = await redis.zcount(`${q}:delayed`, 9007199254736896, '+inf');
    const inBull = held + (await redis.zcard(`${q}:prioritized`)) + (await redis.llen(`${q}:wait`));
    const counted = (await redis.hvals(`{${prefix}:fair}:~fair:bl`)).reduce(
      (sum, n) => sum + Number(n),
      0,
    );
    const recorded = await added();
    // The batch in flight at the kill is there whole or not at all.
    expect({ whole: inBull % 50, extra: [0, 50].includes(inBull - recorded) }).toEqual({
      whole: 0,
      extra: true,
    });
    // Admitted at enqueue: one job a tenant (cap 1); the rest held, each in its backlog.
    expect(counted).toBe(held);
    await forkFixture(
      'layout-worker.ts',
      { TQ_PREFIX: prefix, TQ_FAIRNESS: JSON.stringify(BASE), TQ_CONCURRENCY: '20' },
      children,
    );
    const done = async () => await redis.hlen(`{${prefix}:rec}:done`);
    await waitFor(async () => (await done()) === inBull, `all ${inBull} jobs run`, 30_000);
    const max = Object.values(await redis.hgetall(`{${prefix}:rec}:max`)).map(Number);
    expect(Math.max(...max)).toBe(1);
  });
});
