import { INestApplication } from '@nestjs/common';
import request from 'supertest';

import { FairnessDemoModule } from '../../../sample-app/fairness/fairness-demo.module';
import { bootSampleHttp } from '../../support/sample-http';
import { waitFor } from '../../support/wait';

describe('sample FairnessDemoModule over HTTP', () => {
  let app: INestApplication;

  beforeAll(async () => {
    app = await bootSampleHttp(FairnessDemoModule);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('splits an import into chunk jobs and serves a small tenant beside a big one', async () => {
    const big = await request(app.getHttpServer())
      .post('/imports')
      .set('x-tenant-id', 'big')
      .send({ rows: 200_000, importId: 'big-import' })
      .expect(201);
    expect(big.body).toMatchObject({ tenantId: 'big', chunks: 200 });
    await request(app.getHttpServer())
      .post('/imports')
      .set('x-tenant-id', 'small')
      .send({ rows: 2_000, importId: 'small-import' })
      .expect(201);
    await waitFor(async () => {
      const res = await request(app.getHttpServer()).get('/imports/fairness/small');
      return res.body.backlog === 0 && res.body.inFlight === 0;
    }, 'the small import to finish');
    const state = await request(app.getHttpServer()).get('/imports/fairness/big').expect(200);
    expect(state.body.backlog).toBeGreaterThan(150);
    expect(state.body.inFlight).toBeLessThanOrEqual(2);
  });

  it("sets a tenant's guaranteed floor under its cap", async () => {
    const res = await request(app.getHttpServer())
      .put('/imports/fairness/globex/floor')
      .send({ min: 1 })
      .expect(200);
    expect(res.body).toMatchObject({
      concurrency: 2,
      minConcurrency: 1,
      minConcurrencyOverride: 1,
    });
  });
});
