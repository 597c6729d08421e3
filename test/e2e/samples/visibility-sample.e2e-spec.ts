import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { register } from 'prom-client';
import request from 'supertest';
import {
  TenantContext,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../../lib';
import { VisibilityDemoModule } from '../../../sample-app/visibility';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

@TenantProcessor('vis-sample')
class SampleProcessor extends TenantWorkerHost {
  async process() {
    return 'ok';
  }
}

describe('sample: VisibilityDemoModule (dashboard behind Basic auth, /metrics)', () => {
  let app: INestApplication;
  const auth = `Basic ${Buffer.from('admin:s3cret').toString('base64')}`;

  beforeAll(async () => {
    process.env.DASHBOARD_PASSWORD = 's3cret';
    register.clear();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('vsa'), {}, { middleware: { mount: true } }),
        TenantQueueModule.registerQueue({ name: 'vis-sample' }),
        VisibilityDemoModule.register({ path: 'ops/tenants' }),
      ],
      providers: [SampleProcessor],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    register.clear();
    delete process.env.DASHBOARD_PASSWORD;
  });

  it('serves Prometheus metrics labelled by queue and tenant', async () => {
    const queue = app.get<TenantQueue>('TenantQueue:vis-sample');
    await app.get(TenantContext).run('acme', () => queue.add('hello', {}));
    const server = app.getHttpServer();
    let text = '';
    await waitFor(async () => {
      text = (await request(server).get('/metrics')).text;
      return text.includes('result="completed"');
    }, 'the completed job in /metrics');
    expect(text).toContain(
      'tenant_queue_jobs_total{queue="vis-sample",tenant="acme",result="completed",reason=""} 1',
    );
    expect(text).toMatch(
      /tenant_queue_scheduling_lag_seconds_count\{queue="vis-sample",tenant="acme"\} 1/,
    );
  });

  it('mounts the dashboard at the configured path, behind the guard', async () => {
    const server = app.getHttpServer();
    await request(server).get('/ops/tenants').expect(401);
    const page = await request(server).get('/ops/tenants').set('authorization', auth).expect(200);
    expect(page.text).toContain('<main id="view" data-testid="view">'); // the dashboard's page
    const data = await request(server)
      .get('/ops/tenants/api/tenants')
      .set('authorization', auth)
      .expect(200);
    expect(data.body.queues).toEqual(['vis-sample']);
    expect(data.body.controls).toBe(true); // the fair gate provides pause/resume
  });
});
