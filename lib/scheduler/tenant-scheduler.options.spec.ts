import { InvalidTenantQueueOptionsError } from '../core/errors';
import { resolveTenantSchedulerOptions } from './tenant-scheduler.options';

const resolve = (scheduler: unknown) =>
  resolveTenantSchedulerOptions({ connection: {}, scheduler } as never);

describe('scheduler options', () => {
  it('fills documented defaults', () => {
    expect(resolve(undefined)).toEqual({
      enabled: true,
      tickInterval: 1000,
      batchSize: 500,
      claimTimeout: 30000,
      lateAfter: 60000,
      cronQueue: 'tq-cron',
      cronConcurrency: 10,
    });
  });

  // A tick claims an occurrence up to a tick interval after it is due: a lateAfter under that
  // counted on-time runs as missed, and the default `missed: 'skip'` never ran them.
  it.each([
    [{ lateAfter: 0 }, 'it is 0 ms', 'at least 2000 ms'],
    [{ lateAfter: 500 }, 'it is 500 ms', 'at least 2000 ms'],
    [{ tickInterval: 100, lateAfter: 150 }, 'it is 150 ms', 'at least 200 ms'],
    [{ tickInterval: 120_000 }, 'it is 60000 ms', 'at least 240000 ms'],
  ])('refuses %j: lateAfter below two tick intervals', (scheduler, is, least) => {
    expect(() => resolve(scheduler)).toThrow(InvalidTenantQueueOptionsError);
    expect(() => resolve(scheduler)).toThrow('"scheduler.lateAfter"');
    expect(() => resolve(scheduler)).toThrow(is);
    expect(() => resolve(scheduler)).toThrow(least);
  });

  it('takes a lateAfter of two tick intervals or more', () => {
    expect(resolve({ tickInterval: 100, lateAfter: 200 })).toMatchObject({
      tickInterval: 100,
      lateAfter: 200,
    });
    expect(resolve({ tickInterval: 120_000, lateAfter: 240_000 }).lateAfter).toBe(240_000);
  });
});
