import { ChildProcess } from 'node:child_process';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Pool } from 'pg';
import { EnqueuedJob, TenantContext, TenantQueueModule, TenantQueueRegistry } from '../../../lib';
import { CrashPoint, ONCE_SCHEMA } from '../../fixtures/exactly-once-shared';
import { StartedPostgres, startPostgres } from '../../support/postgres';
import { exited, forkFixture, killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

const ROUNDS = 10;
/** Every process forked here, killed in afterAll whatever happened. */
const children: ChildProcess[] = [];

describe.each<CrashPoint>(['before-commit', 'after-commit'])(
  'runOnce: a worker SIGKILLed %s, x10',
  (point) => {
    const prefix = uniquePrefix('once');
    let postgres: StartedPostgres;
    let pool: Pool;
    let producer: INestApplicationContext;

    /** Called with the process that reached the current round's crash point. */
    let onCrashPoint: ((child: ChildProcess, message: string) => void) | undefined;

    /** A forked worker; resolves once it is ready. */
    async function startWorker(): Promise<ChildProcess> {
      const env = { TQ_PREFIX: prefix, TQ_DATABASE_URL: postgres.url };
      const child = await forkFixture('exactly-once-worker.ts', env, children);
      child.on('message', (message) => {
        if (String(message).startsWith('crash-point:')) onCrashPoint?.(child, String(message));
      });
      return child;
    }

    async function rows(job: EnqueuedJob) {
      const effects = await pool.query<{ pid: number }>(
        'SELECT pid FROM effects WHERE tenant_id = $1 AND run_id = $2',
        [job.tenantId, job.id],
      );
      const markers = await pool.query(
        'SELECT 1 FROM tenant_job_runs WHERE tenant_id = $1 AND run_id = $2',
        [job.tenantId, job.id],
      );
      return { effects: effects.rows.map((row) => row.pid), markers: markers.rowCount };
    }

    /** Once the redelivered run completed elsewhere: one effect, one marker, the work done once. */
    async function expectDoneOnce(job: EnqueuedJob, killedPid: number) {
      const bull = producer.get(TenantQueueRegistry).getQueue('once').bullQueue;
      await waitFor(
        async () => (await bull.getJobState(job.id)) === 'completed',
        `job ${job.id} to complete in another process`,
        90_000,
      );
      const { returnvalue } = (await bull.getJob(job.id))!;
      expect(returnvalue.by).not.toBe(killedPid);
      // The repeated run of a committed one saw its marker and did not redo the work.
      expect(returnvalue.ran).toBe(point === 'before-commit');
      const workedBy = point === 'before-commit' ? returnvalue.by : killedPid;
      expect(await rows(job)).toEqual({ effects: [workedBy], markers: 1 });
    }

    beforeAll(async () => {
      postgres = await startPostgres();
      pool = new Pool({ connectionString: postgres.url, max: 2 });
      for (const statement of ONCE_SCHEMA) await pool.query(statement);
      @Module({
        imports: [
          ...testRootImports(prefix),
          TenantQueueModule.registerQueue({ name: 'once', attempts: 1 }),
        ],
      })
      class ProducerModule {}
      producer = await NestFactory.createApplicationContext(ProducerModule, { logger: false });
    });

    afterAll(async () => {
      await killAll(children);
      await producer?.close();
      await pool?.end();
      await postgres?.stop();
    });

    it('leaves exactly one effect every time', async () => {
      const queue = producer.get(TenantQueueRegistry).getQueue('once');
      const context = producer.get(TenantContext);
      // Two workers at a time: one dies at the crash point, the other recovers its job while a
      // replacement boots.
      await Promise.all([startWorker(), startWorker()]);
      for (let round = 0; round < ROUNDS; round++) {
        const reached = new Promise<{ child: ChildProcess; message: string }>((resolve) => {
          onCrashPoint = (child, message) => resolve({ child, message });
        });
        const tenant = round % 2 === 0 ? 'acme' : 'globex';
        const job = await context.run(tenant, () => queue.add('effect', { crashAt: point }));
        const { child, message } = await reached;
        expect(message).toBe(`crash-point:${point}`);
        child.kill('SIGKILL');
        await exited(child);
        // Boots while the other worker recovers the job; the next round starts with two again.
        const replacement = startWorker();
        // Killed mid-transaction, nothing is left; killed after COMMIT, work and marker are.
        expect(await rows(job)).toEqual(
          point === 'before-commit'
            ? { effects: [], markers: 0 }
            : { effects: [child.pid], markers: 1 },
        );
        await expectDoneOnce(job, child.pid!);
        await replacement;
      }
      const { rows: total } = await pool.query('SELECT count(*)::int AS n FROM effects');
      expect(total[0].n).toBe(ROUNDS);
    }, 600_000);
  },
);
