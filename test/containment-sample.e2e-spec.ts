import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import request from 'supertest';
import { TenantQueueModule } from '../lib';
import { ContainmentDemoModule } from '../sample-app/containment';
import { redisConnection, uniquePrefix } from './support/redis-url';
import { waitFor } from './support/wait';

jest.setTimeout(30_000);

describe('sample: containment demo over HTTP', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ClsModule.forRoot({ global: true, middleware: { mount: true } }),
        TenantQueueModule.forRoot({ connection: redisConnection(), prefix: uniquePrefix('demo') }),
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
});
