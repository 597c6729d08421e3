import { Controller, INestApplication, Module, Param, Post } from '@nestjs/common';
import { ExternalContextCreator } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  DeadLetters,
  TenantScheduler,
  InjectTenantQueue,
  MissingTenantError,
  PoolRoutingUnavailableError,
  TenantContext,
  TenantQueue,
  TenantQueueExceptionFilter,
  TenantQueueModule,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';

@Controller()
class RoutesController {
  constructor(
    @InjectTenantQueue('filtered') private readonly queue: TenantQueue,
    private readonly letters: DeadLetters,
    private readonly tenant: TenantContext,
    private readonly scheduler: TenantScheduler,
  ) {}

  /** Saves a schedule the tenant sent (a bad cron: InvalidScheduleError). */
  @Post('schedules/:cron')
  schedule(@Param('cron') cron: string) {
    return this.scheduler.upsert(this.tenant.getTenantIdOrThrow(), 'report', {
      cron,
      job: { queue: 'filtered', name: 'work', data: {} },
    });
  }

  /** Enqueues in the request's tenant (none: MissingTenantError). */
  @Post('jobs')
  add() {
    return this.queue.add('work', {});
  }

  /** What a pooled queue's add throws while the directory is down for a tenant never routed. */
  @Post('pool-outage')
  poolOutage() {
    throw new PoolRoutingUnavailableError('imports', 'acme', 'the tenant directory failed');
  }

  /** Replays one of the request tenant's dead letters. */
  @Post('letters/:jobId/replay')
  replay(@Param('jobId') jobId: string) {
    return this.letters.replay(this.tenant.getTenantIdOrThrow(), jobId, 'filtered');
  }
}

/** The module's errors on real HTTP routes, through `TenantQueueExceptionFilter`. */
describe('TenantQueueExceptionFilter: what the client can do, as an HTTP status', () => {
  let app: INestApplication;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('filter')),
        TenantQueueModule.registerQueue({ name: 'filtered' }),
      ],
      controllers: [RoutesController],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalFilters(new TenantQueueExceptionFilter());
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('answers a missing tenant 400, an invalid one 400, and enqueues for a good one', async () => {
    const missing = await request(app.getHttpServer()).post('/jobs');
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ statusCode: 400, error: 'MissingTenantError' });
    const invalid = await request(app.getHttpServer()).post('/jobs').set('x-tenant-id', 'a b');
    expect(invalid.status).toBe(400);
    const ok = await request(app.getHttpServer()).post('/jobs').set('x-tenant-id', 'acme');
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ tenantId: 'acme', queueName: 'filtered' });
  });

  it("answers a replay of a dead letter the tenant does not have (another tenant's job id) 404", async () => {
    const job = await request(app.getHttpServer()).post('/jobs').set('x-tenant-id', 'acme');
    const replay = await request(app.getHttpServer())
      .post(`/letters/${job.body.id}/replay`)
      .set('x-tenant-id', 'globex');
    expect(replay.status).toBe(404);
    expect(replay.body).toMatchObject({ statusCode: 404, error: 'DeadLetterNotFoundError' });
  });

  it('answers a pool routing refused for a directory outage 503 with Retry-After: nothing was written, retry', async () => {
    const outage = await request(app.getHttpServer()).post('/pool-outage');
    expect(outage.status).toBe(503);
    expect(outage.headers['retry-after']).toBe('5');
    expect(outage.body).toMatchObject({ statusCode: 503, error: 'PoolRoutingUnavailableError' });
  });

  it('answers a schedule a tenant sent that cannot run (a bad cron) 400, with what to fix', async () => {
    const bad = await request(app.getHttpServer())
      .post(`/schedules/${encodeURIComponent('61 * * * *')}`)
      .set('x-tenant-id', 'acme');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: 'InvalidScheduleError' });
    expect(bad.body.message).toMatch(/Invalid cron expression "61 \* \* \* \*".*Use five fields/);
  });

  it('steps aside outside HTTP: a GraphQL-style resolver (global filters on) gets the error itself', async () => {
    // How @nestjs/graphql builds a resolver: ExternalContextCreator, filters on, type 'graphql'.
    const routes = app.get(RoutesController);
    const resolver = app
      .get(ExternalContextCreator)
      .create(
        routes,
        routes.add,
        'add',
        undefined,
        undefined,
        undefined,
        undefined,
        { guards: true, interceptors: true, filters: true },
        'graphql',
      );
    const outcome = await Promise.resolve()
      .then(() => resolver({}, {}, {}, {}))
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(MissingTenantError);
  });
});
