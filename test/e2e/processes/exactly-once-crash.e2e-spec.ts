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
/** A round crashes a job of each at once, each in its own worker. */
const TENANTS = ['acme', 'globex'];
const AT_ONCE = TENANTS.length;
/** Every process forked here, killed in afterAll whatever happened. */
const children: ChildProcess[] = [];

describe.each<CrashPoint>(['before-commit', 'after-commit'])(
  'runOnce: a worker SIGKILLed %s, x10',
  (point) => {
    const prefix = uniquePrefix('once');
    let postgres: StartedPostgres;
    let pool: Pool;
    let producer: INestApplicationContext;

    /** The processes that reached a crash point, by the job's id, with what each said. */
    const crashed = new Map<string, { child: ChildProcess; message: string }>();

    /** Workers ready and not killed. */
    const live = new Set<ChildProcess>();
    /** Every boot, awaited at the end (a boot that failed fails the test there). */
    const boots: Promise<ChildProcess>[] = [];

    /** A forked worker; resolves once it is ready. */
    async function startWorker(): Promise<ChildProcess> {
      const env = { TQ_PREFIX: prefix, TQ_DATABASE_URL: postgres.url };
      const child = await forkFixture('exactly-once-worker.ts', env, children);
      child.on('message', (message) => {
        // 'crash-point:<point>:<job id>'
        const [kind, , jobId] = String(message).split(':');
        if (kind === 'crash-point') crashed.set(jobId, { child, message: String(message) });
      });
      live.add(child);
      return child;
    }

    /** Boots `count` workers in the background. */
    function bootWorkers(count: number) {
      for (let i = 0; i < count; i++) {
        const boot = startWorker();
        boot.catch(() => undefined);
        boots.push(boot);
      }
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
      // Two jobs a round, each SIGKILLed at the crash point in its own worker (concurrency 1),
      // and another worker to recover them: a round waits out one lock for two kills. The
      // replacements boot meanwhile, and a round starts once three workers are ready.
      bootWorkers(2 * AT_ONCE + 1);
      for (let round = 0; round < ROUNDS; round += AT_ONCE) {
        await waitFor(() => live.size > AT_ONCE, 'three workers to be ready', 90_000);
        const jobs = await Promise.all(
          TENANTS.map((tenant) =>
            context.run(tenant, () => queue.add('effect', { crashAt: point })),
          ),
        );
        await waitFor(
          () => jobs.every((job) => crashed.has(job.id)),
          `jobs ${jobs.map((job) => job.id).join(', ')} to reach ${point}`,
          60_000,
        );
        const killed = jobs.map((job) => crashed.get(job.id)!);
        expect(killed.map(({ message }) => message)).toEqual(
          jobs.map((job) => `crash-point:${point}:${job.id}`),
        );
        expect(new Set(killed.map(({ child }) => child)).size).toBe(AT_ONCE);
        await Promise.all(
          killed.map(({ child }) => {
            live.delete(child);
            child.kill('SIGKILL');
            return exited(child);
          }),
        );
        if (round + AT_ONCE < ROUNDS) bootWorkers(AT_ONCE);
        for (const [n, job] of jobs.entries()) {
          // Killed mid-transaction, nothing is left; killed after COMMIT, work and marker are.
          expect(await rows(job)).toEqual(
            point === 'before-commit'
              ? { effects: [], markers: 0 }
              : { effects: [killed[n].child.pid], markers: 1 },
          );
        }
        await Promise.all(jobs.map((job, n) => expectDoneOnce(job, killed[n].child.pid!)));
      }
      await Promise.all(boots);
      const { rows: total } = await pool.query('SELECT count(*)::int AS n FROM effects');
      expect(total[0].n).toBe(ROUNDS);
    }, 600_000);
  },
);
