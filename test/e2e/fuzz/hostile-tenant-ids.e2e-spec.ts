import request from 'supertest';
import {
  DASHBOARD_ACTION_HEADER,
  DeadLetters,
  InvalidTenantIdError,
  TenantContext,
  TenantFairness,
  TenantQueueInspector,
  TenantScheduler,
} from '../../../lib';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { HostileApp, bootHostileApp, seen } from '../../support/hostile-app';
import { waitFor } from '../../support/wait';

jest.setTimeout(90_000);

/** Names of Object.prototype's members (and `__proto__`), plus a bystander tenant. */
const HOSTILE = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];
const ALL = [...HOSTILE, 'acme'];
/** The default pattern, but `_` may start an id (so `__proto__` is admitted). */
const PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

describe('tenant ids named after Object.prototype members, through every public API', () => {
  let h: HostileApp;
  const failedIds = new Map<string, string>();

  beforeAll(async () => {
    seen.length = 0;
    h = await bootHostileApp({ tenantIdPattern: PATTERN, tenants: ALL });
  });

  afterAll(async () => {
    await h?.app.close();
  });

  it('enqueues and processes on a plain and a fair queue, each job under its own tenant', async () => {
    const expected = new Map<string, [string, string]>();
    const tenant = h.app.get(TenantContext);
    for (const id of ALL) {
      for (const [name, queue] of [
        ['plain', h.plain],
        ['fair', h.fair],
      ] as const) {
        expected.set((await queue.addForTenant(id, 'ok', {})).id, [name, id]);
        const bulk = await tenant.run(id, () => queue.addBulk([{ name: 'b', data: {} }]));
        expected.set(bulk[0].id, [name, id]);
      }
      failedIds.set(id, (await h.plain.addForTenant(id, 'boom', { fail: true })).id);
    }
    await waitFor(
      () => [...expected.keys()].every((jobId) => seen.some((s) => s.jobId === jobId)),
      'every job to run',
    );
    for (const s of seen.filter((x) => expected.has(x.jobId))) {
      expect([s.queue, s.tenantId]).toEqual(expected.get(s.jobId));
    }
  });

  it('TenantFairness reads and changes each tenant on the fair queue', async () => {
    const fairness = h.app.get(TenantFairness);
    for (const id of ALL) {
      const before = await fairness.getTenant('fair', id);
      expect(before).toMatchObject({ tenantId: id, weightOverride: null, paused: false });
      await fairness.setWeight('fair', id, 3);
      await fairness.setConcurrency('fair', id, 2);
      await fairness.setRateLimit('fair', id, { max: 100, per: 1000 });
      await fairness.pause('fair', id);
      expect(await fairness.getTenant('fair', id)).toMatchObject({
        tenantId: id,
        weight: 3,
        concurrency: 2,
        paused: true,
        rateLimitOverride: { max: 100, per: 1000 },
      });
      await fairness.resume('fair', id);
      await fairness.setWeight('fair', id, null);
      await fairness.setConcurrency('fair', id, null);
      await fairness.setRateLimit('fair', id, null);
      expect(await fairness.getTenant('fair', id)).toMatchObject({
        weightOverride: null,
        paused: false,
      });
    }
  });

  it('DeadLetters lists, gets, replays and purges each tenant apart', async () => {
    const deadLetters = h.app.get(DeadLetters);
    await waitFor(async () => {
      const pages = await Promise.all(ALL.map((id) => deadLetters.list(id)));
      return pages.every((page) => page.total === 1);
    }, 'one dead letter per tenant');
    for (const id of ALL) {
      const jobId = failedIds.get(id)!;
      expect((await deadLetters.list(id)).items.map((l) => [l.tenantId, l.jobId])).toEqual([
        [id, jobId],
      ]);
      expect((await deadLetters.get(id, jobId))?.tenantId).toBe(id);
    }
    const before = seen.length;
    const replayed = await deadLetters.replay('constructor', failedIds.get('constructor')!);
    await waitFor(() => seen.some((s) => s.jobId === replayed.id), 'the replay to run');
    expect(seen.slice(before).find((s) => s.jobId === replayed.id)?.tenantId).toBe('constructor');
    for (const id of ['toString', '__proto__']) expect(await deadLetters.purge(id)).toBe(1);
    expect((await deadLetters.list('acme')).total).toBe(1);
    expect((await deadLetters.list('valueOf')).total).toBe(1);
  });

  it('TenantQueueInspector lists every tenant and reads each one', async () => {
    await h.app.get(TenantMetricsRecorder).flush();
    const inspector = h.app.get(TenantQueueInspector);
    for (const queue of ['plain', 'fair']) {
      const listed = await inspector.listTenants({ queue });
      expect(listed.map((t) => t.tenantId).sort()).toEqual([...ALL].sort());
      for (const id of ALL) expect((await inspector.getTenant(queue, id)).tenantId).toBe(id);
    }
    expect((await inspector.listTenants()).length).toBe(ALL.length * 2);
  });

  it('TenantScheduler keeps each tenant its own schedules', async () => {
    const scheduler = h.app.get(TenantScheduler);
    const job = { queue: 'fair', name: 'nightly' };
    for (const id of ALL) {
      await scheduler.upsert(id, 'nightly', { cron: '0 3 * * *', job });
      expect((await scheduler.list(id)).map((s) => [s.tenantId, s.key])).toEqual([[id, 'nightly']]);
      expect(await scheduler.next(id, 'nightly', 1)).toHaveLength(1);
      expect((await scheduler.pause(id, 'nightly')).enabled).toBe(false);
      expect((await scheduler.resume(id, 'nightly')).enabled).toBe(true);
    }
    h.clock.set('2026-01-01T03:00:00Z');
    const before = seen.length;
    expect((await scheduler.tick()).jobIds).toHaveLength(ALL.length);
    await waitFor(() => seen.length - before >= ALL.length, 'the scheduled runs');
    expect(
      seen
        .slice(before)
        .map((s) => s.tenantId)
        .sort(),
    ).toEqual([...ALL].sort());
    for (const id of ALL) expect(await scheduler.remove(id, 'nightly')).toBe(true);
  });

  it('the dashboard API answers for every tenant over HTTP', async () => {
    const server = h.app.getHttpServer();
    const list = await request(server).get('/admin/queues/api/tenants');
    expect(list.status).toBe(200);
    const listed = (list.body.tenants as { tenantId: string; queue: string }[]).map(
      (t) => `${t.queue}/${t.tenantId}`,
    );
    for (const id of ALL)
      expect(listed).toEqual(expect.arrayContaining([`plain/${id}`, `fair/${id}`]));
    for (const id of ALL) {
      const one = await request(server).get(`/admin/queues/api/tenants/${encodeURIComponent(id)}`);
      expect(one.status).toBe(200);
      expect(one.body.tenantId).toBe(id);
      for (const action of ['pause', 'resume']) {
        const res = await request(server)
          .post(`/admin/queues/api/queues/fair/tenants/${encodeURIComponent(id)}/${action}`)
          .set(DASHBOARD_ACTION_HEADER, '1');
        expect(res.status).toBe(200);
      }
    }
  });
});

describe('__proto__ under the default tenant id pattern', () => {
  let h: HostileApp;

  beforeAll(async () => {
    h = await bootHostileApp();
  });

  afterAll(async () => {
    await h?.app.close();
  });

  it('is refused with InvalidTenantIdError everywhere, nothing written', async () => {
    await expect(h.plain.addForTenant('__proto__', 'ok', {})).rejects.toThrow(InvalidTenantIdError);
    await expect(h.fair.addForTenant('__proto__', 'ok', {})).rejects.toThrow(InvalidTenantIdError);
    await expect(h.app.get(DeadLetters).list('__proto__')).rejects.toThrow(InvalidTenantIdError);
    await expect(h.app.get(TenantFairness).getTenant('fair', '__proto__')).rejects.toThrow(
      InvalidTenantIdError,
    );
    expect(await h.plain.bullQueue.getJobCountByTypes('waiting', 'active', 'completed')).toBe(0);
  });

  it("is refused with 400 by every dashboard route that names a tenant, the id's message included", async () => {
    // Before: the job lists but dead letters, and the tenant's job search, answered 200 with an
    // empty list for an id no tenant can have, where the tenant view and history answered 400.
    const server = h.app.getHttpServer();
    const api = '/admin/queues/api';
    const urls = [
      `${api}/tenants/__proto__`,
      `${api}/queues/plain/tenants/__proto__/history`,
      ...['gate', 'waiting', 'active', 'delayed', 'failed', 'dead-letters'].map(
        (state) => `${api}/queues/fair/tenants/__proto__/jobs?state=${state}`,
      ),
      `${api}/tenants/__proto__/jobs/some-job`,
      `${api}/queues/plain/tenants/__proto__/jobs/some-job/explain`,
    ];
    for (const url of urls) {
      const res = await request(server).get(url);
      expect([url, res.status]).toEqual([url, 400]);
      expect(res.body.message).toMatch(/^Invalid tenant id "__proto__"/);
    }
  });
});
