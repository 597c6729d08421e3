import { Logger } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  InMemoryTenantDirectory,
  TenantBacklogFullError,
  TenantQueueRegistry,
  TenantScheduler,
} from '../../../lib';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { uniquePrefix } from '../../support/redis-url';

jest.setTimeout(60_000);

const TENANTS = Array.from({ length: 20 }, (_, i) => `tenant-${i}`);

/**
 * Many tenants' schedules due at once whose enqueues all fail (here each tenant's backlog is
 * full; a Redis that stalls mid-delivery does the same): one log line per delivery, not one per
 * tenant, and every occurrence stays claimed for its re-send.
 */
describe('TenantScheduler: a delivery whose enqueues fail', () => {
  let app: TestingModule;
  let errors: string[];
  let spy: jest.SpyInstance;
  const clock = new ManualClock(Date.parse('2026-05-01T08:30:00Z'));

  beforeAll(async () => {
    app = await bootSchedulerApp({
      prefix: uniquePrefix(),
      clock,
      directory: new InMemoryTenantDirectory(TENANTS.map((id) => ({ id }))),
      // No worker: a tenant's first job holds its one slot, its second fills its backlog.
      queues: [{ name: 'reports', fairness: { maxBacklog: 1, defaultConcurrency: 1 } }],
    });
  });

  beforeEach(() => {
    errors = [];
    spy = jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((message: unknown) => void errors.push(String(message)));
  });
  afterEach(() => spy.mockRestore());
  afterAll(async () => app?.close());

  it('logs one line for all the occurrences it could not enqueue, and re-sends each later', async () => {
    const queue = app.get(TenantQueueRegistry).getQueue('reports');
    for (const tenant of TENANTS) {
      let full = false;
      for (let i = 0; i < 5 && !full; i++) {
        await queue.addForTenant(tenant, 'fill', {}).catch((error: unknown) => {
          if (!(error instanceof TenantBacklogFullError)) throw error;
          full = true;
        });
      }
      expect([tenant, full]).toEqual([tenant, true]);
    }
    const scheduler = app.get(TenantScheduler);
    for (const tenant of TENANTS) {
      await scheduler.upsert(tenant, 'hourly', {
        cron: '0 * * * *',
        job: { queue: 'reports', name: 'report' },
      });
    }

    clock.set('2026-05-01T09:00:00Z');
    expect(await scheduler.tick()).toMatchObject({ claimed: 20, enqueued: 0 });
    const lines = errors.filter((line) => line.includes('cannot enqueue'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('cannot enqueue 20 of 20 claimed schedule occurrence(s)');
    expect(lines[0]).toContain('scheduler.claimTimeout (30000 ms)');
    expect(lines[0]).toMatch(/The first, t~tenant-\d+~hourly\|\d+: .*maxBacklog/);

    // Past the claim timeout the 20 are re-sent, and fail again: one more line, not 20.
    clock.set('2026-05-01T09:01:00Z');
    expect(await scheduler.tick()).toMatchObject({ recovered: 20, enqueued: 0 });
    expect(errors.filter((line) => line.includes('cannot enqueue'))).toHaveLength(2);
  });
});
