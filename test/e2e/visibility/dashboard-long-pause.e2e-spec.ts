import { CanActivate, INestApplication, Inject, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import request from 'supertest';
import {
  TenantContext,
  TenantFairness,
  TenantQueueControls,
  TenantQueueDashboardModule,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantQueueStateSource,
} from '../../../lib';
import type { TenantQueueSettingsChange } from '../../../lib/metrics/tenant-queue-state-source.interface';
import { FairnessStateSource } from '../../../lib/fairness/fairness-state.source';
import { redisConnection, uniquePrefix } from '../../support/redis-url';

jest.setTimeout(30_000);

@Injectable()
class OpenGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

/** The module's bound on Redis in this app (`enqueueTimeoutMs`): every route answers within it. */
const BOUND_MS = 2000;
/** How long a pause goes on after (or before) the gate applied it. */
const LONG_MS = 3500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The module's controls, with a pause that takes long: for tenant `flood`, after the gate applied
 * it (what taking back 100,000 jobs queued by turn, 1,000 a call, looks like from outside: the
 * pause in force, the call not returned yet); for `stuck`, before (a pause not yet applied).
 */
@Injectable()
class LongPause implements TenantQueueControls {
  static readonly finished: string[] = [];
  constructor(@Inject(TenantQueueStateSource) private readonly real: FairnessStateSource) {}
  async pause(queue: string, tenantId: string): Promise<void> {
    if (tenantId === 'stuck') await sleep(LONG_MS);
    await this.real.pause(queue, tenantId);
    if (tenantId === 'flood') await sleep(LONG_MS);
    LongPause.finished.push(tenantId);
  }
  resume(queue: string, tenantId: string) {
    return this.real.resume(queue, tenantId);
  }
  settings(queue: string, tenantId: string) {
    return this.real.settings(queue, tenantId);
  }
  async configure(queue: string, tenantId: string, change: TenantQueueSettingsChange) {
    await this.real.configure(queue, tenantId, change);
    if (tenantId === 'flood') await sleep(LONG_MS); // a cap takes the queued jobs back too
  }
}

// An operator pausing a flooding tenant waited past the route's bound while its jobs queued by
// turn went back into the gate, and got a 503 saying Redis was not answering.
describe('the dashboard pausing a tenant whose pause takes longer than its answer may', () => {
  let app: INestApplication;
  const post = (path: string) =>
    request(app.getHttpServer())
      .post(`/admin/queues/api/queues/reports/tenants/${path}`)
      .set('x-tenant-queue-dashboard', '1');

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({
          connection: redisConnection(),
          prefix: uniquePrefix('dash-pause'),
          enqueueTimeoutMs: BOUND_MS,
        }),
        TenantQueueModule.registerQueue({ name: 'reports', fairness: {} }),
        // The dashboard's own controls option: what an app gives to put its checks around them.
        TenantQueueDashboardModule.register({ guard: OpenGuard, controls: LongPause }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const queue = app.get(TenantQueueRegistry).getQueue('reports');
    for (const tenantId of ['flood', 'stuck']) {
      await app
        .get(TenantContext)
        .run(tenantId, () =>
          queue.addBulk([1, 2, 3].map((n) => ({ name: 'report', data: { n } }))),
        );
    }
  });

  afterAll(async () => {
    await sleep(LONG_MS); // the pauses still going on end before the app closes
    await app?.close();
  });

  it('answers once the pause is in force, saying the rest goes on', async () => {
    const started = Date.now();
    const res = await post('flood/pause');
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ queue: 'reports', tenantId: 'flood', pending: true });
    expect(res.body.message).toMatch(
      /^Paused flood on reports: in force; the tenant's jobs queued by turn are still being taken back/,
    );
    expect(LongPause.finished).not.toContain('flood');
    const state = await app.get(TenantFairness).getTenant('reports', 'flood');
    expect(state).toMatchObject({ paused: true, queuedByTurn: 0 });
  });

  it('never says so before the pause is in force: the route waits, as for a Redis away', async () => {
    const res = await post('stuck/pause');
    expect(res.status).toBe(503);
    expect((await app.get(TenantFairness).getTenant('reports', 'stuck')).paused).toBe(false);
  });

  it('answers a cap the same way once the settings show it', async () => {
    const started = Date.now();
    const res = await post('flood/settings').send({ concurrency: 2 });
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ pending: true, settings: { concurrency: 2, paused: true } });
    expect(res.body.message).toMatch(/^Saved the settings of flood on reports: in force; /);
  });

  it('answers a pause or resume that ends in time as before', async () => {
    const resumed = await post('flood/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body).toEqual({
      queue: 'reports',
      tenantId: 'flood',
      action: 'resume',
      message: 'Resumed flood on reports',
    });
  });
});
