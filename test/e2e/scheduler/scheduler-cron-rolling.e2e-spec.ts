import { Injectable } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Queue } from 'bullmq';
import {
  InMemoryTenantDirectory,
  TenantCron,
  TenantCronRun,
  TenantQueueRegistry,
} from '../../../lib';
import { FANOUT_JOB, FanOutJobData } from '../../../lib/scheduler/schedule-delivery';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { captureWarnings } from '../../support/collecting-logger';
import { uniquePrefix } from '../../support/redis-url';
import { testConnection } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

jest.setTimeout(300_000);

const runs: string[] = [];

/** The older version's provider. */
@Injectable()
class OldDigests {
  @TenantCron('0 3 * * *', { name: 'old-digest' })
  async digest() {}
}

/** The newer version's provider: it adds the cron `new-digest`. */
@Injectable()
class NewDigests {
  @TenantCron('30 * * * *', { name: 'new-digest' })
  async digest(run: TenantCronRun) {
    runs.push(run.tenantId);
  }
}

describe('a rolling deploy that adds a @TenantCron: an older instance hands its jobs back', () => {
  const prefix = uniquePrefix('rolling');
  const directory = new InMemoryTenantDirectory([{ id: 'acme' }, { id: 'globex' }]);
  const apps: TestingModule[] = [];
  const queues: Queue[] = [];
  let warnings: ReturnType<typeof captureWarnings>;

  beforeAll(() => (warnings = captureWarnings()));
  afterAll(async () => {
    warnings.restore();
    for (const queue of queues) await queue.close();
    for (const app of apps) await app.close();
  });

  it("the old instance's workers never run, complete or fail the new cron's jobs; the new instance runs them for every tenant", async () => {
    // The old version: no `new-digest`, but the same queues, Redis and prefix.
    const clock = new ManualClock(Date.parse('2026-06-01T10:30:00Z'));
    const old = await bootSchedulerApp({ prefix, clock, directory, providers: [OldDigests] });
    apps.push(old);
    // BullMQ's own view of the fan-out queue (this app has added no fan-out yet).
    const fanOut = new Queue('tq-cron-fanout', {
      connection: testConnection(),
      prefix: `{${prefix}:tq-cron-fanout}`,
    });
    queues.push(fanOut);
    // The new version's driver claimed 10:30 and added its fan-out; the old worker takes it.
    const data: FanOutJobData = {
      name: 'new-digest',
      cron: '30 * * * *',
      timezone: 'UTC',
      missed: 'skip',
      maxCatchUp: 10,
      from: Date.parse('2026-06-01T10:30:00Z') - 1,
      to: Date.parse('2026-06-01T10:30:00Z'),
    } as FanOutJobData;
    const job = await fanOut.add(FANOUT_JOB, data, { jobId: 'fanout-new-digest-1', attempts: 3 });
    await waitFor(
      () => /"new-digest" is not declared in this app/.test(warnings.lines.join('\n')),
      'the old instance to hand the fan-out back',
    );
    await waitFor(async () => (await job.getState()) === 'delayed', 'the fan-out back in BullMQ');
    expect((await fanOut.getJob(job.id!))!.attemptsMade).toBe(0);

    // The new version boots beside it: the fan-out, and each tenant's job, run there only.
    const fresh = await bootSchedulerApp({
      prefix,
      clock,
      directory,
      providers: [OldDigests, NewDigests],
    });
    apps.push(fresh);
    // Each hand-back is a new draw of which instance's worker takes the job: within the window.
    const took = Date.now();
    await waitFor(async () => (await job.getState()) === 'completed', 'the fan-out', 120_000);
    console.log(`rolling: the new instance took the fan-out after ${Date.now() - took} ms`);
    await waitFor(() => runs.length === 2, "each tenant's run", 120_000);
    expect(runs.sort()).toEqual(['acme', 'globex']);
    const cron = old.get(TenantQueueRegistry).getQueue('tq-cron').bullQueue as Queue;
    expect(await cron.getJobCounts('failed', 'completed')).toEqual({ failed: 0, completed: 2 });
    // Warned once for the cron, whatever the hand-backs.
    expect(warnings.lines.filter((l) => /"new-digest" is not declared/.test(l))).toHaveLength(1);
  });
});
