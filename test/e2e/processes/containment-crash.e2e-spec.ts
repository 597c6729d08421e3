import { ChildProcess } from 'node:child_process';
import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import IORedis from 'ioredis';
import { DeadLetters, TenantContext, TenantQueueModule, TenantQueueRegistry } from '../../../lib';
import { exited, forkFixture, killAll } from '../../support/processes';
import { redisConnection, uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { waitFor } from '../../support/wait';

/** Every process forked here, killed in afterAll whatever happened. */
const children: ChildProcess[] = [];

function startWorker(prefix: string, crash: boolean): Promise<ChildProcess> {
  return forkFixture(
    'containment-worker.ts',
    { TQ_PREFIX: prefix, CRASH: crash ? '1' : '0' },
    children,
  );
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const done = exited(child);
  child.send('stop');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await done;
  clearTimeout(timer);
}

describe('a worker process killed mid-job', () => {
  const prefix = uniquePrefix('crash');
  const redis = new IORedis({ ...redisConnection(), maxRetriesPerRequest: null });
  const key = (name: string) => `${prefix}:test:${name}`;
  let app: TestingModule;
  let crashing: ChildProcess | undefined;
  let survivor: ChildProcess | undefined;

  beforeAll(async () => {
    @Module({
      imports: [...testRootImports(prefix), TenantQueueModule.registerQueue({ name: 'crash' })],
    })
    class ProducerModule {}
    app = await bootTestModule({ imports: [ProducerModule] });
  });

  afterAll(async () => {
    await stop(survivor);
    await killAll(children);
    await app?.close();
    await redis.quit();
  });

  it('redelivers each job once to another process, and its effect happens once', async () => {
    crashing = await startWorker(prefix, true);
    const queue = app.get(TenantQueueRegistry).getQueue('crash');
    const context = app.get(TenantContext);
    const afterRun = await context.run('acme', () => queue.add('after-run', {}));
    const midRun = await context.run('acme', () => queue.add('mid-run', {}));

    expect(await exited(crashing)).toBe('SIGKILL');
    const killedPid = String(crashing.pid);
    survivor = await startWorker(prefix, false);
    const bull = queue.bullQueue;
    await waitFor(
      async () =>
        (await bull.getJobState(afterRun.id)) === 'completed' &&
        (await bull.getJobState(midRun.id)) === 'completed',
      'both jobs to complete in the surviving process',
      45_000,
    );

    for (const job of [afterRun, midRun]) {
      expect(await redis.lrange(key(`attempts:${job.id}`), 0, -1)).toEqual([
        killedPid,
        String(survivor.pid),
      ]);
      expect(await redis.get(key(`effects:${job.id}`))).toBe('1');
    }
    // The run that completed before the crash is not run again: its first result stands.
    expect((await bull.getJob(afterRun.id))?.returnvalue).toEqual({ by: crashing.pid });
    // The run that crashed half-way runs again (its claim expired with the dead process).
    expect((await bull.getJob(midRun.id))?.returnvalue).toEqual({ by: survivor.pid });
  }, 60_000);

  it('dead-letters a job that kills every process running it, as STALLED', async () => {
    const queue = app.get(TenantQueueRegistry).getQueue('crash');
    const poison = await app.get(TenantContext).run('acme', () => queue.add('poison', {}));
    const first = survivor!;
    expect(await exited(first)).toBe('SIGKILL');
    const second = await startWorker(prefix, false);
    expect(await exited(second)).toBe('SIGKILL');
    // Stalled twice (maxStalledCount 1): the third process fails it without running it.
    survivor = await startWorker(prefix, false);
    const deadLetters = app.get(DeadLetters);
    await waitFor(async () => !!(await deadLetters.get('acme', poison.id)), 'the dead letter');
    expect(await deadLetters.get('acme', poison.id)).toMatchObject({
      tenantId: 'acme',
      reason: 'STALLED',
      failedReason: 'job stalled more than allowable limit',
    });
    expect(await redis.lrange(key(`attempts:${poison.id}`), 0, -1)).toEqual([
      String(first.pid),
      String(second.pid),
    ]);
  }, 60_000);
});
