import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { SchedulerClock, TenantScheduler } from '../../../lib';
import { guardsDemoPorts } from '../../../sample-app/guards/guards-demo.module';
import { SchedulesDemoModule } from '../../../sample-app/schedules/schedules.module';
import { ManualClock } from '../../fixtures/scheduler-app';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

describe('sample app: nightly digests at 09:00 local time, and a schedule per tenant', () => {
  let app: INestApplication;
  const clock = new ManualClock(Date.parse('2026-06-01T00:00:00Z'));

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(
          uniquePrefix('sched-sample'),
          { scheduler: { enabled: false }, ...guardsDemoPorts() },
          { middleware: { mount: true } },
        ),
        SchedulesDemoModule.register(),
      ],
    })
      .overrideProvider(SchedulerClock)
      .useValue(clock)
      .compile();
    app = moduleRef.createNestApplication();
    await app.init();
  });

  afterAll(() => app.close());

  it('sends each tenant its digests at the right local times', async () => {
    const server = app.getHttpServer();
    const scheduler = app.get(TenantScheduler);
    const tickAt = async (when: string) => {
      clock.set(when);
      await scheduler.tick();
    };
    const digests = async (tenant: string) =>
      (await request(server).get('/schedules/digests').set('x-tenant-id', tenant).expect(200))
        .body as { kind: string; scheduledFor: string }[];

    // acme (Kyiv) asks for 07:30 on weekdays, in its own zone.
    const set = await request(server)
      .put('/schedules/digest')
      .set('x-tenant-id', 'acme')
      .send({ cron: '30 7 * * 1-5' })
      .expect(200);
    expect(set.body.upcoming).toEqual([
      '2026-06-01T04:30:00.000Z',
      '2026-06-02T04:30:00.000Z',
      '2026-06-03T04:30:00.000Z',
    ]);
    const bad = await request(server)
      .put('/schedules/digest')
      .set('x-tenant-id', 'acme')
      .send({ cron: '30 25 * * *' })
      .expect(400);
    expect(bad.body.message).toMatch(/Invalid cron expression "30 25 \* \* \*"/);
    expect(
      (await request(server).get('/schedules').set('x-tenant-id', 'acme').expect(200)).body,
    ).toMatchObject([{ key: 'digest', cron: '30 7 * * 1-5', timezone: 'tenant' }]);

    await tickAt('2026-06-01T04:30:00Z'); // acme's own schedule
    await tickAt('2026-06-01T06:00:00Z'); // 09:00 in Kyiv
    await tickAt('2026-06-01T13:00:00Z'); // 09:00 in New York
    await tickAt('2026-06-01T22:30:00Z'); // 09:00 on Lord Howe Island (+10:30 in June)
    await waitFor(async () => (await digests('acme')).length === 2, "acme's two digests");
    await waitFor(async () => (await digests('globex')).length === 1, "globex's digest");
    await waitFor(async () => (await digests('initech')).length === 1, "initech's digest");
    expect(await digests('acme')).toEqual([
      { kind: 'custom', scheduledFor: '2026-06-01T04:30:00.000Z' },
      { kind: 'nightly', scheduledFor: '2026-06-01T06:00:00.000Z' },
    ]);
    expect(await digests('globex')).toEqual([
      { kind: 'nightly', scheduledFor: '2026-06-01T13:00:00.000Z' },
    ]);
    expect(await digests('initech')).toEqual([
      { kind: 'nightly', scheduledFor: '2026-06-01T22:30:00.000Z' },
    ]);
    await request(server).delete('/schedules/digest').set('x-tenant-id', 'acme').expect(200);
    await request(server).get('/schedules').expect(400); // no tenant
  });
});
