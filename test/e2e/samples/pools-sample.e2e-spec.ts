import { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { TenantQueueRegistry } from '../../../lib';
import { PoolsDemoModule } from '../../../sample-app/pools';
import { bootSampleHttp } from '../../support/sample-http';
import { waitFor } from '../../support/wait';

/** The README's curl walk of the pools demo: acme's import lands in acme's own pool. */
describe('sample PoolsDemoModule over HTTP', () => {
  let app: INestApplication;

  beforeAll(async () => {
    app = await bootSampleHttp(PoolsDemoModule);
  });

  afterAll(async () => {
    await app?.close();
  });

  it("routes acme's import to csv-imports-acme and globex's to the shared pool", async () => {
    const server = app.getHttpServer();
    const start = (tenant: string) =>
      request(server).post('/csv-imports').set('x-tenant-id', tenant).send({ file: 'orders.csv' });
    const acme = (await start('acme').expect(201)).body;
    const globex = (await start('globex').expect(201)).body;
    expect(acme).toMatchObject({ pool: 'csv-imports-acme', tenantId: 'acme' });
    expect(globex).toMatchObject({ pool: 'csv-imports', tenantId: 'globex' });

    const state = (tenant: string, job: { pool: string; jobId: string }) =>
      request(server).get(`/csv-imports/${job.pool}/${job.jobId}`).set('x-tenant-id', tenant);
    await waitFor(
      async () => (await state('acme', acme)).body.state === 'completed',
      "acme's import",
    );
    expect((await state('acme', acme)).body.result).toEqual({
      pool: 'csv-imports-acme',
      rows: 100,
    });
    await waitFor(
      async () => (await state('globex', globex)).body.state === 'completed',
      "globex's import",
    );
    await state('globex', acme).expect(404);
    await state('acme', { pool: 'emails', jobId: acme.jobId }).expect(404);

    const registry = app.get(TenantQueueRegistry);
    expect(registry.getWorker('csv-imports-acme')).toBeDefined();
    expect(registry.getWorker('csv-imports')).toBeDefined();
  });
});
