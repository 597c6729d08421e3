import { TestingModule } from '@nestjs/testing';
import {
  InMemoryTenantDirectory,
  TenantQueueRegistry,
  TenantScheduler,
  tenantScheduleJobId,
} from '../../../lib';
import { ScheduleStore } from '../../../lib/scheduler/schedule.store';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { captureWarnings } from '../../support/collecting-logger';
import { uniquePrefix } from '../../support/redis-url';

jest.setTimeout(60_000);

const at = Date.parse;
const job = { queue: 'reports', name: 'report', data: { kind: 'hourly' } };

/**
 * Two processes on one Redis and prefix that register different queues (another app, or a
 * producer-only process): a schedule is sent by a process that registers its queue, never lost
 * to one that does not.
 */
describe('TenantScheduler: a process without the schedule queue', () => {
  let owner: TestingModule;
  let other: TestingModule;
  let warnings: ReturnType<typeof captureWarnings>;
  const clock = new ManualClock(at('2026-05-01T08:00:00Z'));
  const directory = new InMemoryTenantDirectory([{ id: 'acme' }]);

  beforeAll(async () => {
    const prefix = uniquePrefix();
    owner = await bootSchedulerApp({ prefix, clock, directory, queues: ['reports'] });
    other = await bootSchedulerApp({ prefix, clock, directory, queues: ['media'] });
  });

  beforeEach(() => (warnings = captureWarnings()));
  afterEach(() => warnings.restore());

  afterAll(async () => {
    await other?.close();
    await owner?.close();
  });

  const jobIds = async (app: TestingModule) =>
    (await app.get(TenantQueueRegistry).getQueue('reports').bullQueue.getJobs()).map((j) => j.id);

  it('is not claimed by a process that does not register its queue (logged once)', async () => {
    await owner.get(TenantScheduler).upsert('acme', 'hourly', { cron: '0 * * * *', job });
    clock.set('2026-05-01T09:00:00Z');
    expect(await other.get(TenantScheduler).tick()).toMatchObject({ claimed: 0, jobIds: [] });
    expect(await other.get(TenantScheduler).tick()).toMatchObject({ claimed: 0, jobIds: [] });
    const left = warnings.lines.filter((w) => w.includes('schedule "t~acme~hourly"'));
    expect(left).toHaveLength(1);
    expect(left[0]).toContain('queue "reports", which this process does not register');

    const id = tenantScheduleJobId('acme', 'hourly', at('2026-05-01T09:00:00Z'));
    expect((await owner.get(TenantScheduler).tick()).jobIds).toEqual([id]);
    expect(await jobIds(owner)).toContain(id);
  });

  it('hands a claimed occurrence it recovers back at once, for the owner to send', async () => {
    const id = tenantScheduleJobId('acme', 'hourly', at('2026-05-01T10:00:00Z'));
    // Left in the outbox by an owner that stopped between claim and enqueue, its lease over.
    const store = owner.get(ScheduleStore);
    clock.set('2026-05-01T10:00:00Z');
    await store.claim(at('2026-05-01T10:00:30Z'), [
      {
        id: 't~acme~hourly',
        expected: at('2026-05-01T10:00:00Z'),
        next: at('2026-05-01T11:00:00Z'),
        members: [`t~acme~hourly|${at('2026-05-01T10:00:00Z')}`],
      },
    ]);
    clock.set('2026-05-01T10:01:00Z');
    expect(await other.get(TenantScheduler).tick()).toMatchObject({ recovered: 1, jobIds: [] });
    // Released, not leased for another claim timeout: the owner's next tick sends it.
    expect(await owner.get(TenantScheduler).tick()).toMatchObject({ recovered: 1, jobIds: [id] });
    expect(await jobIds(owner)).toContain(id);
  });
});
