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

/** After a downtime every tenant's schedule has missed runs: one line for all of them. */
describe('TenantScheduler: many schedules that missed runs while no scheduler ran', () => {
  let app: TestingModule;
  const clock = new ManualClock(Date.parse('2026-05-01T08:30:00Z'));

  beforeAll(async () => {
    app = await bootSchedulerApp({
      prefix: uniquePrefix(),
      clock,
      directory: new InMemoryTenantDirectory(TENANTS.map((id) => ({ id }))),
      queues: ['reports'],
    });
  });
  afterAll(async () => app?.close());

  it('logs one warning for all of them, and each schedule at debug level', async () => {
    const scheduler = app.get(TenantScheduler);
    for (const tenant of TENANTS) {
      await scheduler.upsert(tenant, 'hourly', {
        cron: '0 * * * *',
        missed: tenant === 'tenant-0' ? 'once' : 'skip',
        job: { queue: 'reports', name: 'report' },
      });
    }
    const warned: string[] = [];
    const debugged: string[] = [];
    const warn = jest
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation((message: unknown) => void warned.push(String(message)));
    const debug = jest
      .spyOn(Logger.prototype, 'debug')
      .mockImplementation((message: unknown) => void debugged.push(String(message)));
    try {
      // Down from 08:30 to 13:10: 09:00 to 13:00, 5 runs each, missed.
      clock.set('2026-05-01T13:10:00Z');
      expect(await scheduler.tick()).toMatchObject({ claimed: 20, enqueued: 1 });
    } finally {
      warn.mockRestore();
      debug.mockRestore();
    }
    const missed = warned.filter((line) => line.includes('missed run'));
    expect(missed).toHaveLength(1);
    expect(missed[0]).toContain(
      '20 schedules missed runs while no scheduler ticked: 100 run(s) in all, of which their missed policies run 1 now',
    );
    expect(missed[0]).toMatch(/the first, tenant tenant-\d+ schedule "hourly": 5 missed run\(s\)/);
    const lines = debugged.filter((line) => line.includes('missed run'));
    expect(lines).toHaveLength(20);
    expect(lines.find((line) => line.startsWith('tenant=tenant-0 '))).toContain(
      'tenant tenant-0 schedule "hourly": 5 missed run(s); policy "once" runs 1 of them',
    );
  });
});
