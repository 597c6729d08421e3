import { INestApplication } from '@nestjs/common';
import { ContextIdFactory } from '@nestjs/core';
import request from 'supertest';
import { TenantContextIdStrategy } from '../../../lib';
import { ProvidersDemoModule } from '../../../sample-app/providers';
import { bootSampleHttp } from '../../support/sample-http';
import { waitFor } from '../../support/wait';

/** The README's curl tour of sample-app/providers, with the strategy main.ts applies. */
describe('sample ProvidersDemoModule over HTTP', () => {
  let app: INestApplication;

  beforeAll(async () => {
    ContextIdFactory.apply(new TenantContextIdStrategy());
    app = await bootSampleHttp(ProvidersDemoModule);
  });

  afterAll(async () => {
    await app?.close();
    ContextIdFactory.apply(undefined as never);
  });

  const finished = async (tenant: string, jobId: string) => {
    let body: Record<string, any> = {};
    await waitFor(async () => {
      const res = await request(app.getHttpServer())
        .get(`/archives/jobs/${jobId}`)
        .set('x-tenant-id', tenant);
      body = res.body;
      return body.state === 'completed' || body.state === 'failed';
    }, `archive job ${jobId}`);
    return body;
  };

  it('builds one storage client per tenant for its requests and jobs, and removes temp dirs', async () => {
    const server = app.getHttpServer();
    const storage = async (tenant: string) =>
      (await request(server).get('/archives/storage').set('x-tenant-id', tenant).expect(200)).body;
    const acme = await storage('acme');
    expect(acme).toMatchObject({ tenantId: 'acme', bucket: 'archives-acme' });
    expect((await storage('acme')).instanceId).toBe(acme.instanceId);
    const globex = await storage('globex');
    expect(globex.instanceId).not.toBe(acme.instanceId);

    const archive = (tenant: string, files: string[]) =>
      request(server).post('/archives').set('x-tenant-id', tenant).send({ files }).expect(201);
    const jobs = await Promise.all([
      archive('acme', ['a.pdf']),
      archive('globex', ['b.pdf']),
      archive('acme', ['c.pdf', 'd.pdf']),
    ]);
    const results = await Promise.all(
      jobs.map((res, i) => finished(i === 1 ? 'globex' : 'acme', res.body.jobId)),
    );
    // The failed reason beside the state: a job that failed says why in the assertion's diff.
    expect(
      results.map((r) => [r.state, r.failedReason, r.result?.storageInstance, r.tempDirRemoved]),
    ).toEqual([
      ['completed', null, acme.instanceId, true],
      ['completed', null, globex.instanceId, true],
      ['completed', null, acme.instanceId, true],
    ]);
    expect(results[0].result.key).toBe(`archives-acme/${jobs[0].body.jobId}.zip`);
  });

  it('removes the temp dir of a job that throws, and keeps its error', async () => {
    const res = await request(app.getHttpServer())
      .post('/archives')
      .set('x-tenant-id', 'acme')
      .send({ files: ['corrupt.bin'] })
      .expect(201);
    const job = await finished('acme', res.body.jobId);
    expect(job).toMatchObject({
      state: 'failed',
      failedReason: 'corrupt.bin cannot be archived',
      tempDirRemoved: true,
    });
    await request(app.getHttpServer()).get('/archives/storage').expect(400);
  });
});
