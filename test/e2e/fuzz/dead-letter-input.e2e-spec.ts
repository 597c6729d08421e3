import Redis from 'ioredis';
import request from 'supertest';
import {
  DASHBOARD_ACTION_HEADER,
  DeadLetters,
  InvalidDeadLetterQueryError,
  InvalidJobIdError,
  InvalidTenantIdError,
  TenantQueueError,
  TenantTiers,
  UnknownTenantQueueError,
} from '../../../lib';
import { HostileApp, bootHostileApp } from '../../support/hostile-app';
import { redisConnection } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const LONG = 'x'.repeat(5000);
const BAD_TENANTS: unknown[] = ['', LONG, '__proto__', 'a:b', ' acme', null, 7, {}];
const BAD_JOB_IDS: unknown[] = ['', 'x'.repeat(1025), LONG, null, 7, {}, ['1']];
const BAD_QUEUES: unknown[] = ['', 'nope', '__proto__', 'constructor', LONG, null, 7, {}];

/** A sentence that tells the caller what to do next. */
const ADVICE = /\b(Pass|Use|Add|Leave|List)\b/;

type Call = [label: string, run: (d: DeadLetters) => Promise<unknown>];

/** Every public DeadLetters method with one bad argument, the others valid. */
function calls(jobId: string): Call[] {
  const out: Call[] = [];
  const d = (fn: (dl: any) => Promise<unknown>) => fn as (dl: DeadLetters) => Promise<unknown>;
  for (const t of BAD_TENANTS) {
    const s = JSON.stringify(t)?.slice(0, 20);
    out.push([`list(${s})`, d((dl) => dl.list(t))]);
    out.push([`get(${s})`, d((dl) => dl.get(t, jobId))]);
    out.push([`replay(${s})`, d((dl) => dl.replay(t, jobId))]);
    out.push([`purge(${s})`, d((dl) => dl.purge(t))]);
    out.push([`purge(${s}, id)`, d((dl) => dl.purge(t, jobId))]);
  }
  for (const j of BAD_JOB_IDS) {
    const s = JSON.stringify(j)?.slice(0, 20);
    out.push([`get(acme, ${s})`, d((dl) => dl.get('acme', j))]);
    out.push([`replay(acme, ${s})`, d((dl) => dl.replay('acme', j))]);
    out.push([`purge(acme, ${s})`, d((dl) => dl.purge('acme', j))]);
  }
  for (const q of BAD_QUEUES) {
    const s = JSON.stringify(q)?.slice(0, 20);
    out.push([`list(acme, { queue: ${s} })`, d((dl) => dl.list('acme', { queue: q }))]);
    out.push([`get(acme, id, ${s})`, d((dl) => dl.get('acme', jobId, q))]);
    out.push([`replay(acme, id, ${s})`, d((dl) => dl.replay('acme', jobId, q))]);
    out.push([`purge(acme, undefined, ${s})`, d((dl) => dl.purge('acme', undefined, q))]);
    out.push([`purge(acme, id, ${s})`, d((dl) => dl.purge('acme', jobId, q))]);
  }
  for (const page of [{ offset: -1 }, { offset: 1.5 }, { limit: 0 }, { limit: 'ten' }]) {
    out.push([`list(acme, ${JSON.stringify(page)})`, d((dl) => dl.list('acme', page))]);
  }
  return out;
}

/** Every dead-letter key of the app's prefix with its content. */
async function deadLetterState(redis: Redis): Promise<string> {
  const keys = (await redis.keys('*~dlq*')).sort();
  const dumps = await Promise.all(keys.map((key) => redis.dumpBuffer(key)));
  return JSON.stringify(keys.map((key, i) => [key, dumps[i]?.toString('hex')]));
}

describe('DeadLetters with an empty, too long or hostile tenant id, job id or queue name', () => {
  let h: HostileApp;
  let redis: Redis;
  let jobId: string;

  beforeAll(async () => {
    h = await bootHostileApp({ tenants: ['acme'] });
    redis = new Redis(redisConnection());
    jobId = (await h.plain.addForTenant('acme', 'boom', { fail: true })).id;
    const deadLetters = h.app.get(DeadLetters);
    await waitFor(async () => (await deadLetters.list('acme')).total === 1, 'the dead letter');
  });

  afterAll(async () => {
    redis?.disconnect();
    await h?.app.close();
  });

  it('each public method refuses with a typed error that says what to do, and writes nothing', async () => {
    const deadLetters = h.app.get(DeadLetters);
    const before = await deadLetterState(redis);
    const untyped: string[] = [];
    for (const [label, run] of calls(jobId)) {
      const error = await run(deadLetters).then(
        (value) => new Error(`${label} answered ${JSON.stringify(value)}`),
        (e: unknown) => e as Error,
      );
      if (!(error instanceof TenantQueueError)) {
        untyped.push(`${label}: ${error.name}: ${error.message.slice(0, 120)}`);
        continue;
      }
      // Says what to do next, and never echoes a 5000-character argument whole.
      if (!ADVICE.test(error.message) || error.message.length > 600) {
        untyped.push(`${label}: ${error.name}: ${error.message.slice(0, 200)}`);
      }
    }
    expect(untyped).toEqual([]);
    expect(await deadLetterState(redis)).toBe(before);
    expect((await deadLetters.get('acme', jobId))?.jobId).toBe(jobId);
  });

  it('names the argument by its error class', async () => {
    const deadLetters = h.app.get(DeadLetters);
    await expect(deadLetters.purge('')).rejects.toBeInstanceOf(InvalidTenantIdError);
    await expect(deadLetters.purge('acme', '')).rejects.toBeInstanceOf(InvalidJobIdError);
    await expect(deadLetters.get('acme', 'x'.repeat(1025))).rejects.toBeInstanceOf(
      InvalidJobIdError,
    );
    await expect(deadLetters.replay('acme', '')).rejects.toBeInstanceOf(InvalidJobIdError);
    await expect(deadLetters.list('acme', { queue: '__proto__' })).rejects.toBeInstanceOf(
      UnknownTenantQueueError,
    );
    await expect(deadLetters.list('acme', { limit: 0 })).rejects.toBeInstanceOf(
      InvalidDeadLetterQueryError,
    );
    // The id a lookup refuses as too long is one no add admits.
    await expect(
      h.plain.addForTenant('acme', 'boom', {}, { jobId: 'x'.repeat(1001) }),
    ).rejects.toBeInstanceOf(InvalidJobIdError);
  });

  it('the dashboard answers 400 (404 for a queue no registerQueue declared) with that message', async () => {
    const server = h.app.getHttpServer();
    const base = '/admin/queues/api/queues';
    const long = encodeURIComponent('x'.repeat(1025));
    const before = await deadLetterState(redis);
    const cases: [string, number][] = [
      [`${base}/plain/tenants/acme/dead-letters/${long}/replay`, 400],
      [`${base}/plain/tenants/acme/dead-letters/purge?jobId=${long}`, 400],
      [`${base}/plain/tenants/acme/dead-letters/purge?jobId=`, 400],
      [`${base}/plain/tenants/${encodeURIComponent('x'.repeat(200))}/dead-letters/purge`, 400],
      [`${base}/plain/tenants/a%3Ab/dead-letters/${jobId}/replay`, 400],
      [`${base}/__proto__/tenants/acme/dead-letters/purge`, 404],
      [`${base}/__proto__/tenants/acme/dead-letters/${jobId}/replay`, 404],
      // Misspelled or bracketed, `jobId` is missing to the route: refused, never "purge all".
      [`${base}/plain/tenants/acme/dead-letters/purge?jobId[]=${jobId}`, 400],
      [`${base}/plain/tenants/acme/dead-letters/purge?jobId[x]=${jobId}`, 400],
      [`${base}/plain/tenants/acme/dead-letters/purge?jobID=${jobId}`, 400],
      [`${base}/plain/tenants/acme/dead-letters/purge?jobId=${jobId}&all=1`, 400],
      // Another tenant's letter is one that does not exist.
      [`${base}/plain/tenants/globex/dead-letters/purge?jobId=${jobId}`, 404],
      [`${base}/plain/tenants/a%3Ab/jobs/${jobId}/retry`, 400],
      [`${base}/plain/tenants/-bad/jobs/${jobId}/retry`, 400],
    ];
    for (const [url, status] of cases) {
      const res = await request(server).post(url).set(DASHBOARD_ACTION_HEADER, '1');
      expect([url.slice(0, 90), res.status]).toEqual([url.slice(0, 90), status]);
      expect(res.body.message).toMatch(ADVICE);
    }
    expect(await deadLetterState(redis)).toBe(before);
  });

  it("the dashboard's tier route refuses a tenant id the pattern refuses, and writes nothing", async () => {
    const server = h.app.getHttpServer();
    const written = async () =>
      (await redis.keys('*')).filter((key) => /tiers|~fair:t:/.test(key)).sort();
    const before = await written();
    for (const id of ['has space', '-bad', 'a:b{x}', 'x'.repeat(5000)]) {
      const res = await request(server)
        .post(`/admin/queues/api/tenants/${encodeURIComponent(id)}/tier`)
        .set(DASHBOARD_ACTION_HEADER, '1')
        .send({ tier: null });
      expect([id.slice(0, 20), res.status]).toEqual([id.slice(0, 20), 400]);
      expect(res.body.message).toMatch(ADVICE);
    }
    // TenantTiers.setTier itself, the route's way in, refuses alike.
    await expect(h.app.get(TenantTiers).setTier('-bad', null)).rejects.toBeInstanceOf(
      InvalidTenantIdError,
    );
    expect(await written()).toEqual(before);
  });
});
