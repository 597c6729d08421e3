import { CanActivate, INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import request from 'supertest';
import {
  TenantContext,
  TenantQueueDashboardModule,
  TenantQueueModule,
  TenantQueueRegistry,
} from '../../../lib';
import { hasRedisServer, startRedis, StartedRedis } from '../../support/redis-server';
import { isClusterRun } from '../../support/test-redis';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const run = hasRedisServer() && !isClusterRun() ? describe : describe.skip;

@Injectable()
class OpenGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

/** The module's bound on Redis in this app (`enqueueTimeoutMs`). */
const BOUND_MS = 1000;

// The dashboard is what an operator opens when Redis is in trouble: its routes answer 503 within
// `enqueueTimeoutMs` instead of waiting (they hung past 15 s) or failing with a 500.
run('the dashboard while its Redis is away', () => {
  let server: StartedRedis;
  let app: INestApplication;

  beforeAll(async () => {
    server = await startRedis();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({
          connection: { host: '127.0.0.1', port: server.port },
          prefix: uniquePrefix('dash-down'),
          enqueueTimeoutMs: BOUND_MS,
        }),
        TenantQueueModule.registerQueue({ name: 'reports', fairness: {} }),
        TenantQueueDashboardModule.register({ guard: OpenGuard }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const queue = app.get(TenantQueueRegistry).getQueue('reports');
    await app.get(TenantContext).run('acme', () => queue.add('report', {}));
  });

  afterAll(async () => {
    await app?.close();
    await server?.stop();
  });

  it('answers 503 with Retry-After within the bound, then 200 once Redis is back', async () => {
    const http = () => request(app.getHttpServer());
    const routes = [
      () => http().get('/admin/queues/api/tenants'),
      () => http().get('/admin/queues/api/tenants/acme'),
      () => http().get('/admin/queues/api/queues/reports/tenants/acme/jobs?state=gate'),
      () =>
        http()
          .post('/admin/queues/api/queues/reports/tenants/acme/pause')
          .set('x-tenant-queue-dashboard', '1'),
    ];
    expect((await routes[0]()).status).toBe(200);
    const port = server.port;
    await server.stop();
    for (const route of routes) {
      const started = Date.now();
      const res = await route();
      expect([res.status, res.headers['retry-after']]).toEqual([503, '5']);
      expect(res.body.message).toMatch(/Redis is not answering the dashboard/);
      expect(Date.now() - started).toBeLessThan(BOUND_MS + 4000);
    }
    server = await startRedis([], port);
    await waitFor(async () => (await routes[1]()).status === 200, 'the dashboard back', 20_000);
  });
});
