import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { ApiBudgetModule } from '../../../sample-app/fairness/api-budget.module';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

describe('sample: one budget across two queues, over HTTP (the tour step)', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('bud'), {}, { middleware: { mount: true } }),
        ApiBudgetModule,
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  it("keeps each tenant's calls on both queues together within the budget's cap of 3", async () => {
    for (const tenant of ['acme', 'globex']) {
      const res = await request(app.getHttpServer())
        .post('/api-budget/calls')
        .set('x-tenant-id', tenant)
        .send({ sync: 6, webhooks: 6 })
        .expect(201);
      expect(res.body).toEqual({ tenantId: tenant, queued: { sync: 6, webhooks: 6 } });
    }
    const seen = (tenant: string) =>
      request(app.getHttpServer()).get('/api-budget/calls').set('x-tenant-id', tenant);
    for (const tenant of ['acme', 'globex']) {
      let body: { done: number; running: number; peak: number } | undefined;
      await waitFor(async () => {
        body = (await seen(tenant).expect(200)).body;
        return body!.done === 12;
      }, `${tenant}'s 12 calls`);
      // Each queue alone would let 3 run (6 together); the budget holds both to 3. At least two
      // ran at once, so the cap (not a one-at-a-time worker) is what held them.
      expect(body).toMatchObject({ done: 12, running: 0 });
      expect(body!.peak).toBeLessThanOrEqual(3);
      expect(body!.peak).toBeGreaterThanOrEqual(2);
    }
  });
});
