import { Injectable } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Job, Queue } from 'bullmq';
import {
  InMemoryTenantDirectory,
  TenantCron,
  TenantCronRun,
  TenantQueueRegistry,
  TenantScheduler,
} from '../../../lib';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { captureWarnings } from '../../support/collecting-logger';
import { uniquePrefix } from '../../support/redis-url';
import { sleep, waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const runs: string[] = [];

@Injectable()
class Digests {
  // Completed jobs removed at once: a common setting, and the one that let a retried fan-out
  // enqueue again the tenants whose jobs had already run.
  @TenantCron('0 9 * * *', { name: 'kept-none', jobOptions: { removeOnComplete: true } })
  async digest(run: TenantCronRun) {
    runs.push(run.tenantId);
  }
}

const TENANTS = ['t1', 't2', 't3', 't4', 't5', 't6'];

/**
 * A fan-out whose attempt fails after some pages (its directory away, or its process killed)
 * resumes after the last page it enqueued through: the tenants of those pages get no second job,
 * even when their first one already ran and was removed (`removeOnComplete`).
 */
describe('@TenantCron: a fan-out retried after its first pages', () => {
  let app: TestingModule;
  let fanOuts: Queue;
  const clock = new ManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const directory = new InMemoryTenantDirectory(
    TENANTS.map((id) => ({ id })),
    2,
  );

  beforeAll(async () => {
    app = await bootSchedulerApp({
      prefix: uniquePrefix(),
      clock,
      directory,
      providers: [Digests],
    });
    fanOuts = app.get(TenantQueueRegistry).getQueue('tq-cron-fanout').bullQueue;
  });

  afterAll(async () => {
    await app?.close();
  });

  it('enqueues no tenant of the pages before the failure again, and every other one once', async () => {
    const list = directory.listActiveTenants.bind(directory);
    // Pages 1 and 2 (t1..t4) answer; page 3 fails until healed.
    let down = true;
    directory.listActiveTenants = (cursor) =>
      down && cursor === 't4' ? Promise.reject(new Error('directory replica lost')) : list(cursor);
    const warnings = captureWarnings();
    try {
      clock.set('2026-06-01T09:00:00.100Z');
      await app.get(TenantScheduler).tick();
      let fanOut: Job | undefined;
      await waitFor(async () => {
        fanOut = (await fanOuts.getDelayed()).find((j) => j.attemptsMade === 1);
        return !!fanOut;
      }, 'the fan-out to wait for its retry');
      expect(fanOut!.failedReason).toBe('directory replica lost');
      // The first attempt's jobs ran, and BullMQ removed them.
      await waitFor(() => runs.length === 4, 'the jobs of the first two pages');
      down = false;
      await fanOut!.promote();
      await waitFor(() => runs.length >= TENANTS.length, 'a job for every tenant');
      await sleep(500);
      expect(runs.slice().sort()).toEqual(TENANTS);
    } finally {
      directory.listActiveTenants = list;
      warnings.restore();
    }
  });
});
