import { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { guardsDemoPorts } from '../../../sample-app/guards/guards-demo.module';
import { DEMO_TIERS, TiersDemoModule } from '../../../sample-app/tiers/tiers-demo.module';
import { bootSampleHttp } from '../../support/sample-http';
import { sleep, waitFor } from '../../support/wait';

describe('sample TiersDemoModule over HTTP', () => {
  let app: INestApplication;
  const http = () => request(app.getHttpServer());
  const runs = async (tenant: string) =>
    (await http().get('/reports/runs').set('x-tenant-id', tenant).expect(200)).body as {
      name: string;
      waitedMs: number;
      ranAt: string;
    }[];

  beforeAll(async () => {
    app = await bootSampleHttp(TiersDemoModule, { ...guardsDemoPorts(), tiers: DEMO_TIERS });
  });

  afterAll(async () => {
    await app?.close();
  });

  it("shows each tenant its tier's limits, holds the free tier's rate, and moves a tenant to pro at once", async () => {
    const free = await http().get('/reports/limits').set('x-tenant-id', 'globex').expect(200);
    expect(free.body).toMatchObject({
      rateLimit: { max: 6, per: 60_000, burst: 2 },
      concurrency: 1,
      weight: 1,
    });
    const pro = await http().get('/reports/limits').set('x-tenant-id', 'acme').expect(200);
    expect(pro.body).toMatchObject({ rateLimit: { max: 120, per: 60_000, burst: 10 }, weight: 3 });

    await http().post('/reports').set('x-tenant-id', 'globex').send({ count: 5 }).expect(201);
    await http().post('/reports').set('x-tenant-id', 'acme').send({ count: 5 }).expect(201);
    await waitFor(async () => (await runs('acme')).length === 5, "acme's five reports");
    await sleep(300);
    // Free: a burst of 2, then one every 10 s.
    expect((await runs('globex')).length).toBeLessThanOrEqual(2);
    const limited = await http().get('/reports/limits').set('x-tenant-id', 'globex').expect(200);
    expect(limited.body.backlog + limited.body.inFlight).toBeGreaterThanOrEqual(3);
    expect(limited.body.rateLimitedUntil).not.toBeNull();

    const moved = await http().put('/admin/tenants/globex/tier').send({ tier: 'pro' }).expect(200);
    expect(moved.body.rateLimit).toEqual({ max: 120, per: 60_000, burst: 10 });
    await waitFor(
      async () => (await runs('globex')).length === 5,
      "globex's reports at pro speed",
      5_000,
    );
  });

  it('runs an interactive report ahead of a nightly batch', async () => {
    await http().post('/reports').set('x-tenant-id', 'initech').send({ count: 1 }).expect(201);
    await http().put('/admin/tenants/initech/tier').send({ tier: 'pro' }).expect(200);
    await http().post('/reports').set('x-tenant-id', 'initech').send({ count: 12, nightly: true });
    await sleep(100);
    await http().post('/reports').set('x-tenant-id', 'initech').send({ count: 1 }).expect(201);
    await waitFor(async () => (await runs('initech')).length === 14, 'every run', 10_000);
    const list = await runs('initech');
    const click = list.filter((r) => r.name === 'report');
    const nightly = list.filter((r) => r.name === 'nightly-report');
    expect(click).toHaveLength(2);
    // 12 nightly reports of 300 ms on 2 slots take ~1.8 s; the click, queued after them, runs
    // ahead of most of them (it waits only for a free slot under initech's cap of 4).
    const finishedAfter = nightly.filter((r) => Date.parse(r.ranAt) > Date.parse(click[0].ranAt));
    expect(finishedAfter.length).toBeGreaterThanOrEqual(6);
  });
});
