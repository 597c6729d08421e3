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

/** A process of test/fixtures/layout-worker.ts; its layout warnings land in `warns`. */
async function start(prefix: string, fairness: TenantFairnessOptions, concurrency: number) {
  const warns: string[] = [];
  const child = await forkFixture(
    'layout-worker.ts',
    { TQ_PREFIX: prefix, TQ_FAIRNESS: JSON.stringify(fairness), TQ_CONCURRENCY: `${concurrency}` },
    children,
  );
  child.on('message', (message: { warn?: string }) => {
    if (message?.warn?.includes('lanes or fair keys')) warns.push(message.warn);
  });
  return { child, warns };
}

const CAP_1 = { defaultConcurrency: 1, tickMs: 200 };
const LANES = { ...CAP_1, lanes: { a: { share: 0.5 }, b: { share: 0.5 } } };
const KEYS = { ...CAP_1, fairKey: 'job' as const };
const JOBS = 8;

/**
 * A deploy that changes a fair queue's lanes or fair keys while jobs are held in the gate: the
 * old process is SIGKILLed mid-job with 7 of its tenant's 8 jobs held (cap 1), the new one reads
 * other backlog keys. It takes the held jobs into its own keys at start and says so (both
 * settings, the count): every job runs, never two at once for the tenant's cap of 1.
 */
describe.each([
  ['lanes added', CAP_1, LANES, 'no lanes; no fair keys', 'lanes a, b; no fair keys'],
  ['lanes removed', LANES, CAP_1, 'lanes a, b; no fair keys', 'no lanes; no fair keys'],
  ['fair keys added', CAP_1, KEYS, 'no lanes; no fair keys', 'no lanes; fair keys'],
  ['fair keys removed', KEYS, CAP_1, 'no lanes; fair keys', 'no lanes; no fair keys'],
] as [string, TenantFairnessOptions, TenantFairnessOptions, string, string][])(
  'a fair queue whose %s across a restart',
  (_name, before, after, there, here) => {
    it('runs the jobs held under the old settings, within the cap, and says so', async () => {
      const prefix = uniquePrefix('lay');
      const old = await start(prefix, before, 1);
      expect(await ask(old.child, { add: JOBS, tenant: 't1', ms: 100, from: 0 })).toBe('added');
      const max = () => redis.hget(`{${prefix}:rec}:max`, 't1');
      await waitFor(async () => (await max()) === '1', 'a job running');
      old.child.kill('SIGKILL');
      await new Promise((resolve) => old.child.once('exit', resolve));
      // Its job never ended: no longer running there (BullMQ's stall check runs it again).
      await redis.hset(`{${prefix}:rec}:running`, 't1', 0);
      const next = await start(prefix, after, 2);
      const done = async () => Object.keys(await redis.hgetall(`{${prefix}:rec}:done`)).length;
      await waitFor(async () => (await done()) === JOBS, `all ${JOBS} jobs run`);
      expect(next.warns).toEqual([
        expect.stringContaining(
          `queue "fair" was run by a process with other fairness lanes or fair keys (there: ` +
            `${there}; here: ${here}): the ${JOBS - 1} job(s) queued there were moved into this ` +
            `process's backlog keys`,
        ),
      ]);
      expect(await max()).toBe('1');
      const base = `{${prefix}:fair}:~fair`;
      expect(await redis.zcount(`{${prefix}:fair}:fair:delayed`, 9007199254736896, '+inf')).toBe(0);
      expect(await redis.hlen(`${base}:bl`)).toBe(0);
    });
  },
);
