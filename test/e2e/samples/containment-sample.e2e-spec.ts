import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DeadLetters } from '../../../lib';
import { ContainmentDemoModule } from '../../../sample-app/containment';
import { tenantFacingReason } from '../../../sample-app/tenant-facing';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(30_000);

/** What must never reach a tenant: the server's directories and stack frames. */
const ROOT = process.cwd();
const FRAME = /\n\s+at |\.(ts|js):\d+:\d+/;

describe('sample: containment demo over HTTP', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('demo'), {}, { middleware: { mount: true } }),
        ContainmentDemoModule,
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  const as = (tenant: string) => ({
    get: (path: string) => request(app.getHttpServer()).get(path).set('x-tenant-id', tenant),
    post: (path: string, body: object = {}) =>
      request(app.getHttpServer()).post(path).set('x-tenant-id', tenant).send(body),
  });

  it('dead-letters a flaky job per tenant and replays it for that tenant only', async () => {
    const { body: job } = await as('acme').post('/containment/jobs', { failures: 5 }).expect(201);
    let page: any;
    await waitFor(async () => {
      page = (await as('acme').get('/containment/dead-letters').expect(200)).body;
      return page.total === 1;
    }, 'the dead letter');
    expect(page.items[0]).toMatchObject({
      jobId: job.jobId,
      tenantId: 'acme',
      reason: 'ATTEMPTS_EXHAUSTED',
      attempts: 3,
    });

    const other = (await as('globex').get('/containment/dead-letters').expect(200)).body;
    expect(other).toMatchObject({ total: 0, items: [] });
    await as('globex').post(`/containment/dead-letters/${job.jobId}/replay`).expect(404);

    const replayed = await as('acme').post(`/containment/dead-letters/${job.jobId}/replay`);
    expect(replayed.status).toBe(201);
    expect(replayed.body).toMatchObject({ id: `${job.jobId}.r1`, tenantId: 'acme' });
  });

  it('a replay after the fix completes, for the fixed tenant only', async () => {
    const deadLettered = async (tenant: string) => {
      const { body: job } = await as(tenant).post('/containment/jobs', { failures: 5 }).expect(201);
      await waitFor(async () => {
        const page = (await as(tenant).get('/containment/dead-letters')).body;
        return page.items.some((item: { jobId: string }) => item.jobId === job.jobId);
      }, `${tenant}'s dead letter`);
      return job.jobId as string;
    };
    const fixedJob = await deadLettered('initech');
    const unfixedJob = await deadLettered('umbrella');
    await request(app.getHttpServer())
      .put('/containment/fixed')
      .set('x-tenant-id', 'initech')
      .expect(200, { tenantId: 'initech', fixed: true });

    await as('initech').post(`/containment/dead-letters/${fixedJob}/replay`).expect(201);
    await as('umbrella').post(`/containment/dead-letters/${unfixedJob}/replay`).expect(201);
    const finished = async (tenant: string, id: string) => {
      let body: any;
      await waitFor(async () => {
        body = (await as(tenant).get(`/containment/jobs/${id}.r1`)).body;
        return body.state === 'completed' || body.state === 'failed';
      }, `${tenant}'s replay`);
      return body;
    };
    expect(await finished('initech', fixedJob)).toMatchObject({
      state: 'completed',
      result: { done: `initech/${fixedJob}` },
    });
    expect(await finished('umbrella', unfixedJob)).toMatchObject({ state: 'failed' });
    await as('globex').get(`/containment/jobs/${fixedJob}.r1`).expect(404);
  });

  async function deadLettered(tenant: string, body: object) {
    const { body: job } = await as(tenant).post('/containment/jobs', body).expect(201);
    let page: { items: Record<string, unknown>[] } = { items: [] };
    await waitFor(async () => {
      page = (await as(tenant).get('/containment/dead-letters').expect(200)).body;
      return page.items.some((item) => item.jobId === job.jobId);
    }, `${tenant}'s dead letter`);
    return { jobId: job.jobId as string, text: JSON.stringify(page), page };
  }

  it('lists dead letters without stacks or paths, which the operator API still has', async () => {
    const { jobId, text, page } = await deadLettered('acme', { failures: 5 });
    const item = page.items.find((i) => i.jobId === jobId)!;
    expect(item).toMatchObject({ jobId, tenantId: 'acme', reason: 'ATTEMPTS_EXHAUSTED' });
    expect(Object.keys(item)).not.toContain('stack');
    expect(item.enqueuedAt).toEqual(expect.any(String));
    expect(text).not.toContain(ROOT);
    expect(text).not.toMatch(FRAME);
    // The operator's side (what the dashboard reads) keeps the stack with its paths.
    const letter = await app.get(DeadLetters).get('acme', jobId);
    expect(letter?.stack).toContain(ROOT);
  });

  it("replaces a server path in the failure reason, in the list and in the job's status", async () => {
    const { jobId, text } = await deadLettered('globex', { input: 'orders.csv' });
    expect(text).toContain('cannot read the input: ENOENT');
    expect(text).toContain("open '<server path>'");
    expect(text).not.toContain(ROOT);
    expect(text).not.toMatch(FRAME);
    const status = (await as('globex').get(`/containment/jobs/${jobId}`).expect(200)).body;
    expect(status.failedReason).toMatch(/^cannot read the input: ENOENT: .*'<server path>'$/);
    expect(JSON.stringify(status)).not.toContain(ROOT);
    // The stored reason (operators') names the real file.
    expect((await app.get(DeadLetters).get('globex', jobId))?.failedReason).toContain(ROOT);
  });

  it('keeps what is not a server path', () => {
    expect(tenantFacingReason('quota 5/10 used, see https://status.example.com/api/v1')).toBe(
      'quota 5/10 used, see https://status.example.com/api/v1',
    );
    expect(tenantFacingReason('at /srv/app/dist/main.js and C:\\app\\dist\\main.js')).toBe(
      'at <server path> and <server path>',
    );
    expect(tenantFacingReason(undefined)).toBeNull();
  });
});
