import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { BullBoardModule } from '@bull-board/nestjs';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Job, Worker } from 'bullmq';
import {
  DeadLetterResolvedError,
  DeadLetters,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { TenantBullBoardModule } from '../../../lib/bull-board';
import { DeadLetterWorkerPlugin } from '../../../lib/dead-letters/dead-letter.plugin';
import { redisConnection, uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

/** Runs per job label; a label fails until it is in `fixed`. */
const runs = new Map<string, number>();
const fixed = new Set<string>();

// Completed jobs are removed at once: the letter must be resolved from the worker's own event.
@TenantProcessor('billing', { concurrency: 2, removeOnComplete: { count: 0 } })
class BillingProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ label: string }>) {
    runs.set(job.data.label, (runs.get(job.data.label) ?? 0) + 1);
    if (!fixed.has(job.data.label)) throw new Error(`not fixed yet: ${job.data.label}`);
    return 'done';
  }
}

// Completed jobs are kept (BullMQ's default): a replay's job outlives its letter.
@TenantProcessor('invoices', { concurrency: 2 })
class InvoiceProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ label: string }>) {
    runs.set(job.data.label, (runs.get(job.data.label) ?? 0) + 1);
    if (!fixed.has(job.data.label)) throw new Error(`not fixed yet: ${job.data.label}`);
    return job.data.label;
  }
}

describe('a dead letter whose job completes by another path than DeadLetters.replay', () => {
  let app: INestApplication;
  let base: string;
  let deadLetters: DeadLetters;
  let registry: TenantQueueRegistry;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('dlqr'), {}, { middleware: { mount: true } }),
        TenantQueueModule.registerQueue(
          { name: 'billing', attempts: 1 },
          // No module worker consumes `ledger`: a plain BullMQ worker does.
          { name: 'ledger', attempts: 1 },
          { name: 'invoices', attempts: 1 },
        ),
        BullBoardModule.forRoot({ route: '/queues', adapter: ExpressAdapter }),
        TenantBullBoardModule.register({ adapter: BullMQAdapter }),
      ],
      providers: [BillingProcessor, InvoiceProcessor],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    deadLetters = app.get(DeadLetters);
    registry = app.get(TenantQueueRegistry);
  });

  afterAll(async () => {
    await app?.close();
  });

  async function deadLettered(queue: string, tenant: string, label: string): Promise<string> {
    const { id } = await registry.getQueue(queue).addForTenant(tenant, 'charge', { label });
    await waitFor(
      async () => (await registry.getQueue(queue).bullQueue.getJobState(id)) === 'failed',
      `the failure of ${label}`,
    );
    // A queue no module worker consumes is dead-lettered by a sweep (any module worker's).
    await app.get(DeadLetterWorkerPlugin).sweep(registry.getQueue(queue).definition);
    await waitFor(async () => !!(await deadLetters.get(tenant, id)), `the dead letter of ${label}`);
    return id;
  }

  it("resolves the letter when BullMQ's job.retry() runs it to completion, and refuses a replay", async () => {
    const id = await deadLettered('billing', 'acme', 'retry-api');
    expect((await deadLetters.get('acme', id))?.resolvedAt).toBeUndefined();
    fixed.add('retry-api');
    const job = await Job.fromId(registry.getQueue('billing').bullQueue, id);
    await job!.retry('failed');
    await waitFor(
      async () => !!(await deadLetters.get('acme', id))?.resolvedAt,
      'the letter resolved by the completion',
    );
    // removeOnComplete took the job: only the worker's event could say it completed.
    expect(await Job.fromId(registry.getQueue('billing').bullQueue, id)).toBeUndefined();
    const refusal = await deadLetters.replay('acme', id).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(DeadLetterResolvedError);
    expect((refusal as DeadLetterResolvedError).state).toBe('completed');
    expect((refusal as Error).message).toMatch(/purge the letter instead/);
    // The work ran twice (the failure, the retry), never a third time.
    expect(runs.get('retry-api')).toBe(2);
    expect((await deadLetters.list('acme')).items.map((l) => l.jobId)).toEqual([id]);
    expect(await deadLetters.purge('acme', id)).toBe(1);
  });

  it("resolves the letter when bull-board's retry route hands it to a plain BullMQ worker", async () => {
    const ledger = registry.getQueue('ledger').bullQueue;
    let failing = true;
    let ran = 0;
    const plain = new Worker(
      'ledger',
      async () => {
        ran++;
        if (failing) throw new Error('ledger down');
        return 'posted';
      },
      { connection: redisConnection(), prefix: ledger.opts.prefix },
    );
    try {
      const id = await deadLettered('ledger', 'globex', 'board');
      failing = false;
      await plain.pause();
      const res = await fetch(`${base}/queues/api/queues/ledger/${encodeURIComponent(id)}/retry`, {
        method: 'PUT',
      });
      expect(res.status).toBe(204);
      // Queued again, not yet run: a replay now would run the work twice.
      const early = await deadLetters.replay('globex', id).catch((e: unknown) => e);
      expect(early).toBeInstanceOf(DeadLetterResolvedError);
      expect((early as DeadLetterResolvedError).state).toBe('retrying');
      plain.resume();
      await waitFor(async () => (await ledger.getJobState(id)) === 'completed', 'the completion');
      // No module worker heard it: the periodic resolution (here called at once) finds it.
      const definition = registry.getQueue('ledger').definition;
      expect(await deadLetters.resolveOpen(definition)).toBe(1);
      expect((await deadLetters.get('globex', id))?.resolvedAt).toEqual(expect.any(String));
      const refusal = await deadLetters.replay('globex', id).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(DeadLetterResolvedError);
      expect((refusal as DeadLetterResolvedError).state).toBe('completed');
      expect(ran).toBe(2);
      // Another tenant cannot see or resolve it.
      expect(await deadLetters.get('acme', id)).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  // The periodic resolution reads a page of open letters at once and runs its script only for
  // those whose job completed or is gone: a letter whose job is still failed stays open.
  it('leaves a letter whose job is still failed open, and stops watching one whose job was removed', async () => {
    const queue = registry.getQueue('billing');
    const definition = queue.definition;
    const kept = await deadLettered('billing', 'initech', 'stays-failed');
    const removed = await deadLettered('billing', 'initech', 'removed-job');
    const open = `${definition.bullPrefix}:~dlq-open`;
    const client = openRedis();
    try {
      expect(await client.hexists(open, removed)).toBe(1);
      await (await Job.fromId(queue.bullQueue, removed))!.remove();
      expect(await deadLetters.resolveOpen(definition)).toBe(0);
      expect(await client.hexists(open, kept)).toBe(1);
      expect(await client.hexists(open, removed)).toBe(0);
      expect((await deadLetters.get('initech', kept))?.resolvedAt).toBeUndefined();
      // The removed job's letter stays, replayable, never marked resolved.
      expect((await deadLetters.get('initech', removed))?.resolvedAt).toBeUndefined();
    } finally {
      await client.quit();
    }
  });

  it("takes a replayed letter's failed job out of BullMQ: bull-board's Retry all cannot run it again", async () => {
    const bull = registry.getQueue('billing').bullQueue;
    const id = await deadLettered('billing', 'acme', 'replayed');
    const other = await deadLettered('billing', 'acme', 'retried-by-board');
    fixed.add('replayed');
    fixed.add('retried-by-board');
    const replayed = await deadLetters.replay('acme', id);
    await waitFor(async () => runs.get('replayed') === 2, 'the replay');
    expect(await Job.fromId(bull, id)).toBeUndefined();
    // Retry all failed: the other failed job runs again, the replayed one is not there to.
    const res = await fetch(`${base}/queues/api/queues/billing/retry/failed`, { method: 'PUT' });
    expect(res.status).toBe(200);
    await waitFor(async () => runs.get('retried-by-board') === 2, 'the retried job');
    await waitFor(
      async () => !!(await deadLetters.get('acme', other))?.resolvedAt,
      'its letter resolved',
    );
    expect(runs.get('replayed')).toBe(2);
    // The replay's own run is untouched, and a second replay finds no letter.
    expect(await bull.getJobState(replayed.id)).not.toBe('failed');
    await expect(deadLetters.replay('acme', id)).rejects.toThrow(/no dead letter|not found/i);
    expect(await deadLetters.purge('acme', other)).toBe(1);
  });

  it("keeps a flow child's failed job under its parent when its letter is replayed", async () => {
    const queue = registry.getQueue('billing');
    // Delayed, so the parent waits for its child rather than running under the test.
    const parent = await queue.addForTenant(
      'acme',
      'charge',
      { label: 'parent' },
      { delay: 60_000 },
    );
    const link = { parent: { id: parent.id, queue: `${queue.bullQueue.opts.prefix}:billing` } };
    const child = await queue.addForTenant('acme', 'charge', { label: 'child' }, link);
    await waitFor(async () => !!(await deadLetters.get('acme', child.id)), 'the dead letter');
    const parentJob = (await Job.fromId(queue.bullQueue, parent.id))!;
    const before = await parentJob.getDependenciesCount();
    fixed.add('child');
    await deadLetters.replay('acme', child.id);
    await waitFor(async () => runs.get('child') === 2, 'the replay');
    // Removing the child would have taken it out of its parent's dependencies.
    expect(await queue.bullQueue.getJobState(child.id)).toBe('failed');
    expect(await parentJob.getDependenciesCount()).toEqual(before);
  });

  it('keeps an open letter replayable, and a retried job that fails again re-opens its letter', async () => {
    const id = await deadLettered('billing', 'initech', 'fails-twice');
    const job = await Job.fromId(registry.getQueue('billing').bullQueue, id);
    await job!.retry('failed');
    await waitFor(async () => runs.get('fails-twice') === 2, 'the second failure');
    await waitFor(
      async () =>
        (await registry.getQueue('billing').bullQueue.getJobState(id)) === 'failed' &&
        (await deadLetters.get('initech', id))?.attempts !== undefined,
      'failed again',
    );
    expect((await deadLetters.get('initech', id))?.resolvedAt).toBeUndefined();
    fixed.add('fails-twice');
    const replayed = await deadLetters.replay('initech', id);
    await waitFor(async () => runs.get('fails-twice') === 3, 'the replay');
    expect(replayed.id).not.toBe(id);
    expect(await deadLetters.get('initech', id)).toBeUndefined();
  });

  /** Adds `label` under the caller's own job id `inv-1` and waits for its dead letter. */
  async function failsUnderInv1(label: string): Promise<void> {
    await registry
      .getQueue('invoices')
      .addForTenant('acme', 'charge', { label }, { jobId: 'inv-1' });
    await waitFor(
      async () => (await deadLetters.get('acme', 'inv-1'))?.data.label === label,
      `the dead letter of ${label}`,
    );
  }

  it('replays each round of an id the tenant used again under an id of its own (.r1, then .r2), never as a duplicate of the earlier replay', async () => {
    const bull = registry.getQueue('invoices').bullQueue;
    await failsUnderInv1('round-1');
    fixed.add('round-1');
    const first = await deadLetters.replay('acme', 'inv-1');
    expect(first.id).toBe('inv-1.r1');
    await waitFor(async () => (await bull.getJobState('inv-1.r1')) === 'completed', 'round 1');

    // The same id again (the replay took its failed job out of BullMQ): a new run, failing too.
    await failsUnderInv1('round-2');
    fixed.add('round-2');
    const second = await deadLetters.replay('acme', 'inv-1');
    // inv-1.r1 is round 1's completed job: an add under it would have run nothing.
    expect(second.id).toBe('inv-1.r2');
    await waitFor(async () => runs.get('round-2') === 2, "round 2's replay to run");
    await waitFor(async () => (await bull.getJobState('inv-1.r2')) === 'completed', 'round 2');
    expect((await Job.fromId(bull, 'inv-1.r1'))!.returnvalue).toBe('round-1');
    expect((await Job.fromId(bull, 'inv-1.r2'))!.returnvalue).toBe('round-2');
    expect(await deadLetters.get('acme', 'inv-1')).toBeUndefined();
    expect(runs.get('round-1')).toBe(2);
  });

  it('two replays of one letter at once still run its work once, under one id', async () => {
    await failsUnderInv1('round-3');
    fixed.add('round-3');
    const outcomes = await Promise.allSettled([
      deadLetters.replay('acme', 'inv-1'),
      deadLetters.replay('acme', 'inv-1'),
    ]);
    const ids = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.id] : []));
    expect(ids.length).toBeGreaterThan(0);
    // Past .r1 and .r2, which earlier rounds' completed jobs hold.
    expect(new Set(ids)).toEqual(new Set(['inv-1.r3']));
    const bull = registry.getQueue('invoices').bullQueue;
    await waitFor(async () => (await bull.getJobState('inv-1.r3')) === 'completed', 'round 3');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runs.get('round-3')).toBe(2);
  });
});
