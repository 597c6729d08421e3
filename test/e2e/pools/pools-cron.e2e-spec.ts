import { Injectable } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import {
  InMemoryTenantDirectory,
  TenantContext,
  TenantCron,
  TenantCronRun,
  TenantQueueRegistry,
  TenantScheduler,
  tenantCronJobId,
} from '../../../lib';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

const runs: { tenantId: string; contextTenant: string | undefined }[] = [];

@Injectable()
class Reports {
  constructor(private readonly tenant: TenantContext) {}

  @TenantCron('0 6 * * *', { name: 'pooled-report', queue: 'report-cron' })
  async report(run: TenantCronRun) {
    runs.push({ tenantId: run.tenantId, contextTenant: this.tenant.tenantId });
  }
}

describe('@TenantCron on a queue with a dedicated pool', () => {
  let app: TestingModule;
  const clock = new ManualClock(Date.parse('2026-06-01T00:00:00Z'));

  beforeAll(async () => {
    app = await bootSchedulerApp({
      prefix: uniquePrefix(),
      clock,
      directory: new InMemoryTenantDirectory([{ id: 'big' }, { id: 'small' }, { id: 'tiny' }]),
      queues: [{ name: 'report-cron', routing: { big: 'report-cron-big' } }],
      providers: [Reports],
    });
  });

  afterAll(async () => {
    await app?.close();
  });

  it("runs each tenant's job on the pool it is routed to, with a worker on every pool", async () => {
    clock.set('2026-06-01T06:00:00.100Z');
    await app.get(TenantScheduler).tick();
    await waitFor(() => runs.length === 3, 'a run per tenant');
    for (const run of runs) expect(run.contextTenant).toBe(run.tenantId);
    const registry = app.get(TenantQueueRegistry);
    expect(registry.getWorker('report-cron-big')).toBeDefined();
    const id = tenantCronJobId('pooled-report', 'big', Date.parse('2026-06-01T06:00:00Z'));
    expect(await registry.getQueue('report-cron-big').bullQueue.getJob(id)).toBeDefined();
    expect(await registry.getQueue('report-cron').bullQueue.getJob(id)).toBeUndefined();
  });
});
