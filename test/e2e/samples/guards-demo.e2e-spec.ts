import { INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { GuardsDemoModule, guardsDemoPorts } from '../../../sample-app/guards/guards-demo.module';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

// jest ignores testTimeout inside a project config; 5 s is too short on a loaded CI.
jest.setTimeout(30_000);

describe('sample app: guards demo (the README walk-through)', () => {
  let app: INestApplication;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(
          uniquePrefix('d'),
          { ...guardsDemoPorts() },
          { middleware: { mount: true } },
        ),
        GuardsDemoModule,
      ],
    })
    class DemoApp {}
    const moduleRef = await Test.createTestingModule({ imports: [DemoApp] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  const http = () => request(app.getHttpServer());
  const startExport = (tenant: string, delayMs = 0) =>
    http().post('/exports').set('x-tenant-id', tenant).send({ report: 'orders', delayMs });
  async function finalStatus(tenant: string, id: string) {
    let body: any;
    await waitFor(async () => {
      body = (await http().get(`/exports/${id}`).set('x-tenant-id', tenant)).body;
      return body.state === 'completed' || body.state === 'failed';
    }, `export ${id} to finish`);
    return body;
  }

  it('runs an export, then cancels one whose tenant was suspended while it waited', async () => {
    const done = await startExport('acme');
    expect(done.status).toBe(201);
    expect(await finalStatus('acme', done.body.id)).toMatchObject({
      state: 'completed',
      cancelReason: null,
      result: { file: `exports/acme/orders-${done.body.id}.csv` },
    });

    const waiting = await startExport('acme', 800);
    expect((await http().post('/admin/tenants/acme/suspend')).status).toBe(204);
    expect(await finalStatus('acme', waiting.body.id)).toMatchObject({
      state: 'failed',
      cancelReason: 'TENANT_SUSPENDED',
      failedReason: expect.stringContaining('suspended'),
    });

    const refused = await startExport('acme');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/suspended/);

    expect((await http().post('/admin/tenants/acme/resume')).status).toBe(204);
    expect((await startExport('acme')).status).toBe(201);
  });

  it('cancels an export whose tenant lost the feature while it waited', async () => {
    const waiting = await startExport('globex', 800);
    expect((await http().delete('/admin/tenants/globex/entitlements/exports')).status).toBe(204);
    expect(await finalStatus('globex', waiting.body.id)).toMatchObject({
      state: 'failed',
      cancelReason: 'NOT_ENTITLED',
    });
  });

  it('never shows a tenant another tenant’s export', async () => {
    const mine = await startExport('initech');
    expect((await http().get(`/exports/${mine.body.id}`).set('x-tenant-id', 'acme')).status).toBe(
      404,
    );
  });
});
