/**
 * Issue 22, item 5: one malformed gate entry took the queue down (a value without its tenant line
 * made every gate script fail). Since a job is written once, into BullMQ (issue 25), the gate's
 * record of a job holds only its name and tenant: a record it cannot read is written again from
 * the backlog the job sits in, and the job runs; no script fails, no slot is held.
 *
 * Two apps on one prefix: the producer enqueues, the worker's releases admit the rest, as a
 * second process would.
 */
import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  TenantContext,
  TenantFairness,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { CollectingLogger } from '../../support/collecting-logger';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

const QUEUE = 'bad-entry';
const FAIRNESS = { window: 1, tickMs: 200 };
const ran: string[] = [];

@TenantProcessor(QUEUE, { concurrency: 1 })
class BadEntryProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ ms: number }>) {
    ran.push(job.id!);
    await new Promise((resolve) => setTimeout(resolve, job.data.ms));
  }
}

describe('issue 22: a gate entry the gate cannot read fails its job, and the gate goes on', () => {
  const prefix = uniquePrefix('badentry');
  const logger = new CollectingLogger();
  let producer: TestingModule;
  let worker: TestingModule;
  let redis: TestRedisClient;

  const boot = async (providers: (typeof BadEntryProcessor)[]) => {
    @Module({
      imports: [
        ...testRootImports(prefix),
        TenantQueueModule.registerQueue({ name: QUEUE, fairness: FAIRNESS }),
      ],
      providers,
    })
    class BadEntryModule {}
    const moduleRef = await Test.createTestingModule({ imports: [BadEntryModule] })
      .setLogger(logger)
      .compile();
    await moduleRef.init();
    return moduleRef;
  };

  beforeAll(async () => {
    redis = openRedis();
    producer = await boot([]);
    worker = await boot([BadEntryProcessor]);
  });

  afterAll(async () => {
    await worker?.close();
    await producer?.close();
    await redis?.quit();
  });

  it('runs a job whose gate record has no tenant line, and one whose JSON is broken, with the others', async () => {
    const queue = producer.get(TenantQueueRegistry).getQueue<{ ms: number }>(QUEUE);
    const context = producer.get(TenantContext);
    const add = (tenant: string, ms: number) =>
      context.run(tenant, () => queue.add('n', { ms })).then((job) => job.id!);
    // The window admits one job at a time: the first runs, the others wait in the gate.
    const first = await add('A', 400);
    const noTenantLine = await add('A', 5);
    const brokenJson = await add('A', 5);
    const others = [await add('B', 5), await add('B', 5)];
    const jobs = `{${prefix}:${QUEUE}}:~fair:jobs`;
    // The gate keeps a record of a job only once admitted: these stand for records gone bad.
    await redis.hset(jobs, noTenantLine, '{"n":"n"}');
    await redis.hset(jobs, brokenJson, '{"n":"n","d":{\nA');
    // Another tenant's add goes on while the gate meets them.
    others.push(await add('B', 5), await add('C', 5));

    const bull = queue.bullQueue;
    const state = (id: string) => bull.getJobState(id);
    await waitFor(
      async () => {
        for (const id of [first, noTenantLine, brokenJson, ...others]) {
          if ((await state(id)) !== 'completed') return false;
        }
        return true;
      },
      'every job to complete',
      30_000,
    );
    expect(ran.filter((id) => id === noTenantLine || id === brokenJson)).toHaveLength(2);
    const fairness = producer.get(TenantFairness);
    await waitFor(
      async () => {
        for (const tenant of ['A', 'B', 'C']) {
          const s = await fairness.getTenant(QUEUE, tenant);
          if (s.backlog !== 0 || s.inFlight !== 0) return false;
        }
        return true;
      },
      "every tenant's slots and backlog to be free",
      15_000,
    );
    expect(await redis.zcard(`{${prefix}:${QUEUE}}:~fair:leases`)).toBe(0);
    expect(logger.gateErrors()).toEqual([]);
  }, 60_000);
});
