/**
 * Time share (`share: 'time'`) charges what ran, where it ran.
 * - Issue 22, item 4: attempts that failed and retried were not charged, so a tenant whose jobs
 *   fail twice before succeeding got 75.1% of the worker time against an honest tenant's 24.9%.
 *   Every attempt's run time is charged: equal weights, equal shares of the time.
 * - With lanes, a job's run time is charged back in its own lane. A release took the charge back
 *   from the first lane holding one for the job's name, so with one name in two lanes a tenant's
 *   40 ms bulk jobs were booked against its quick interactive turns, and it got 10-19 % of the
 *   interactive lane against a tenant with only quick jobs (an operator's trial).
 */
import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

const JOB_MS = 20;
/** Attempts that ran: tenant, start, end (performance.now). */
const attempts: [string, number, number][] = [];

@TenantProcessor('ts-retry', { concurrency: 2 })
class RetryProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ failTimes: number }>) {
    const start = performance.now();
    await new Promise((resolve) => setTimeout(resolve, JOB_MS));
    attempts.push([job.tenant!.tenantId, start, performance.now()]);
    if (job.attemptsMade < job.data.failTimes) throw new Error('fails, then retries');
  }
}

/** Interactive starts, by tenant, in start order. */
const interactive: string[] = [];

@TenantProcessor('ts-lanes', { concurrency: 2 })
class LaneProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ ms: number; lane: string }>) {
    if (job.data.lane === 'interactive') interactive.push(job.tenant!.tenantId);
    await new Promise((resolve) => setTimeout(resolve, job.data.ms));
  }
}

describe('time share: every attempt charged, in its own lane', () => {
  let moduleRef: TestingModule;
  const prefix = uniquePrefix('tsretry');

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(prefix),
        TenantQueueModule.registerQueue({
          name: 'ts-retry',
          fairness: { share: 'time', slowLane: false },
        }),
        TenantQueueModule.registerQueue({
          name: 'ts-lanes',
          fairness: {
            share: 'time',
            slowLane: false,
            lanes: { interactive: { share: 0.5 }, bulk: { share: 0.5 } },
          },
        }),
      ],
      providers: [RetryProcessor, LaneProcessor],
    })
    class RetryModule {}
    moduleRef = await Test.createTestingModule({ imports: [RetryModule] }).compile();
    await moduleRef.init();
  });

  afterAll(() => moduleRef?.close());

  it("a tenant whose jobs fail twice before succeeding gets no more than its share of the workers' time", async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<{ failTimes: number }>('ts-retry');
    const context = moduleRef.get(TenantContext);
    const add = (tenant: string, count: number, failTimes: number) =>
      context.run(tenant, () =>
        queue.addBulk(
          Array.from({ length: count }, () => ({
            name: 'work',
            data: { failTimes },
            opts: { attempts: 3 },
          })),
        ),
      );
    // Enough of both that each still has work when the measure ends.
    await add('retrying', 120, 2);
    await add('honest', 360, 0);
    await waitFor(() => attempts.length >= 360, '360 attempts to run', 90_000);
    // Worker time of each tenant over the attempts that started once both ran.
    const from = Math.max(
      ...['retrying', 'honest'].map((t) => attempts.find(([who]) => who === t)![1]),
    );
    const time = new Map<string, number>();
    for (const [tenant, start, end] of attempts.slice(0, 360)) {
      if (start >= from) time.set(tenant, (time.get(tenant) ?? 0) + end - start);
    }
    const share = time.get('retrying')! / (time.get('retrying')! + time.get('honest')!);
    // Equal weights: about half each (the report measured 0.751 before every attempt was charged).
    console.log(`time share of the retrying tenant: ${share.toFixed(3)}`);
    expect(share).toBeGreaterThan(0.35);
    expect(share).toBeLessThan(0.62);
  }, 120_000);

  it('gives two tenants equal turns in the interactive lane when one also has long bulk jobs of the same name', async () => {
    const queue = moduleRef
      .get(TenantQueueRegistry)
      .getQueue<{ ms: number; lane: string }>('ts-lanes');
    const context = moduleRef.get(TenantContext);
    const add = (tenant: string, lane: string, ms: number, count: number) =>
      context.run(tenant, () =>
        queue.addBulk(
          Array.from({ length: count }, () => ({
            name: 'work',
            data: { ms, lane },
            opts: { lane },
          })),
        ),
      );
    await add('mixed', 'bulk', 40, 60);
    await add('mixed', 'interactive', 3, 150);
    await add('quick', 'interactive', 3, 150);
    await waitFor(() => interactive.length >= 160, '160 interactive starts', 60_000);
    // Starts once both tenants had started in the lane.
    const from = Math.max(interactive.indexOf('mixed'), interactive.indexOf('quick'));
    const window = interactive.slice(from, 160);
    const share = window.filter((t) => t === 'mixed').length / window.length;
    console.log(`interactive share of the tenant with bulk jobs too: ${share.toFixed(3)}`);
    // Equal weights, equal quick jobs in the lane: about half (0.10-0.19 before the fix).
    expect(share).toBeGreaterThan(0.35);
    expect(share).toBeLessThan(0.65);
  }, 90_000);
});
