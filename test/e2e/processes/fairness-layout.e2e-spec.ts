import type { ChildProcess } from 'node:child_process';
import type { TenantFairnessOptions } from '../../../lib';
import { ask, forkFixture, killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { sleep, waitFor } from '../../support/wait';

let redis: TestRedisClient;
const children: ChildProcess[] = [];
beforeAll(() => {
  redis = openRedis();
});
afterAll(async () => {
  await killAll(children);
  redis.disconnect();
});

/** A process of test/fixtures/layout-worker.ts; its layout warnings land in `warns`. */
async function start(prefix: string, fairness: TenantFairnessOptions | 'off', concurrency: number) {
  const warns: string[] = [];
  const child = await forkFixture(
    'layout-worker.ts',
    {
      TQ_PREFIX: prefix,
      TQ_FAIRNESS: fairness === 'off' ? 'off' : JSON.stringify(fairness),
      TQ_CONCURRENCY: `${concurrency}`,
    },
    children,
  );
  child.on('message', (message: { warn?: string }) => {
    if (/lanes or fair keys|without fairness/.test(message?.warn ?? '')) warns.push(message!.warn!);
  });
  return { child, warns };
}

const CAP_1 = { defaultConcurrency: 1, tickMs: 200 };
const LANES = { ...CAP_1, lanes: { a: { share: 0.5 }, b: { share: 0.5 } } };
const KEYS = { ...CAP_1, fairKey: 'job' as const };
const JOBS = 8;

/**
 * A process of `fairness` (cap 1) that adds `count` jobs of its tenant, SIGKILLed mid-job with all
 * but one held. The first job runs 1 s, the others `ms`: the first is the one running at the kill
 * however slow the adds and the kill are on a loaded machine (were it done by then, one job
 * fewer would be held). With `gate` every job, once started, waits for that Redis key (the first
 * then runs `ms` too).
 */
async function killedWithHeldJobs(
  prefix: string,
  fairness: TenantFairnessOptions,
  count: number,
  ms: number,
  gate?: string,
) {
  const old = await start(prefix, fairness, 1);
  const first = { add: 1, tenant: 't1', ms: gate ? ms : 1000, from: 0, gate };
  expect(await ask(old.child, first)).toBe('added');
  expect(await ask(old.child, { add: count - 1, tenant: 't1', ms, from: 1, gate })).toBe('added');
  const max = () => redis.hget(`{${prefix}:rec}:max`, 't1');
  await waitFor(async () => (await max()) === '1', 'a job running');
  old.child.kill('SIGKILL');
  await new Promise((resolve) => old.child.once('exit', resolve));
}
const done = async (prefix: string) =>
  Object.keys(await redis.hgetall(`{${prefix}:rec}:done`)).length;
const released = 'runs without fairness here, and 7 job(s) a fair gate held';
const waiting = 'wait held by the fair gate of a worker process with fairness';

/**
 * Every case runs side by side (each its own prefix, one or two processes at a time): most of
 * each is the boots and the wait for BullMQ's stall check to take back the killed job (lock 2 s).
 * Jest runs 5 at a time, in this order: the longest case first.
 */
describe('a fair queue whose settings change across a restart', () => {
  /*
   * A deploy that turns fairness off while jobs are held in the gate: they are BullMQ's delayed
   * jobs until 2039 unless a worker process with fairness still runs to admit them.
   */
  it.concurrent(
    'fairness turned off: leaves them to a worker with fairness that still runs, within its cap, and says so',
    async () => {
      const prefix = uniquePrefix('off');
      // Every job, once started, waits for this key: they stay held until the test sets it.
      const gate = `{${prefix}:rec}:gate`;
      await killedWithHeldJobs(prefix, CAP_1, JOBS, 100, gate);
      const fair = await start(prefix, CAP_1, 1);
      // Running the held jobs (the killed one first): its heartbeat is in the gate.
      await waitFor(
        async () =>
          (await redis.lrange(`{${prefix}:rec}:starts`, 0, -1)).some((line) =>
            line.endsWith(` ${fair.child.pid}`),
          ),
        'the worker with fairness running a job',
      );
      const next = await start(prefix, 'off', 0);
      await waitFor(() => next.warns.length > 0, 'its warning');
      // It looks again when the last heartbeat it saw expires (2.6 s at most): still held then.
      await sleep(3000);
      await redis.set(gate, '1');
      await waitFor(async () => (await done(prefix)) === JOBS, `all ${JOBS} jobs run`);
      expect(next.warns).toEqual([expect.stringContaining(waiting)]);
      expect(await redis.hget(`{${prefix}:rec}:max`, 't1')).toBe('1');
    },
  );

  it.concurrent(
    'fairness turned off: runs the held jobs once no worker with fairness runs, and says so',
    async () => {
      const prefix = uniquePrefix('off');
      await killedWithHeldJobs(prefix, CAP_1, JOBS, 100);
      // Started at once: the killed process's heartbeat still counts until it expires (2.6 s).
      const next = await start(prefix, 'off', 2);
      await waitFor(async () => (await done(prefix)) === JOBS, `all ${JOBS} jobs run`);
      expect(next.warns.some((warn) => warn.includes(released))).toBe(true);
    },
  );

  /**
   * A deploy that changes a fair queue's lanes or fair keys while jobs are held in the gate: the
   * old process is SIGKILLed mid-job with 7 of its tenant's 8 jobs held (cap 1), the new one
   * reads other backlog keys. It takes the held jobs into its own keys at start and says so (both
   * settings, the count): every job runs, never two at once for the tenant's cap of 1.
   */
  it.concurrent.each([
    ['lanes added', CAP_1, LANES, 'no lanes; no fair keys', 'lanes a, b; no fair keys'],
    ['lanes removed', LANES, CAP_1, 'lanes a, b; no fair keys', 'no lanes; no fair keys'],
    ['fair keys added', CAP_1, KEYS, 'no lanes; no fair keys', 'no lanes; fair keys'],
    ['fair keys removed', KEYS, CAP_1, 'no lanes; fair keys', 'no lanes; no fair keys'],
  ] as [string, TenantFairnessOptions, TenantFairnessOptions, string, string][])(
    '%s: runs the jobs held under the old settings, within the cap, and says so',
    async (_name, before, after, there, here) => {
      const prefix = uniquePrefix('lay');
      await killedWithHeldJobs(prefix, before, JOBS, 100);
      const next = await start(prefix, after, 2);
      await waitFor(async () => (await done(prefix)) === JOBS, `all ${JOBS} jobs run`);
      expect(next.warns).toEqual([
        expect.stringContaining(
          `queue "fair" was run by a process with other fairness lanes or fair keys (there: ` +
            `${there}; here: ${here}): the ${JOBS - 1} job(s) queued there were moved into this ` +
            `process's backlog keys`,
        ),
      ]);
      expect(await redis.hget(`{${prefix}:rec}:max`, 't1')).toBe('1');
      const base = `{${prefix}:fair}:~fair`;
      expect(await redis.zcount(`{${prefix}:fair}:fair:delayed`, 9007199254736896, '+inf')).toBe(0);
      expect(await redis.hlen(`${base}:bl`)).toBe(0);
    },
  );
});
