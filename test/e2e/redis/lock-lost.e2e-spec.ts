import { TestingModule } from '@nestjs/testing';
import IORedis from 'ioredis';
import { ClsModule } from 'nestjs-cls';
import {
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { StartedRedis, hasRedisServer, startRedis } from '../../support/redis-server';
import { captureWarningsAndErrors } from '../../support/collecting-logger';
import { bootTestModule } from '../../support/test-module';
import { uniquePrefix } from '../../support/redis-url';
import { isClusterRun } from '../../support/test-redis';
import { sleep, waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const run = hasRedisServer() && !isClusterRun() ? describe : describe.skip;

const LOCK_MS = 1_000;
const runs: string[] = [];
let release: () => void = () => undefined;
const held = new Promise<void>((resolve) => (release = resolve));

@TenantProcessor('paused', { concurrency: 4, lockDuration: LOCK_MS, stalledInterval: LOCK_MS })
class HeldProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    runs.push(job.id!);
    await held;
    return 'done';
  }
}

/**
 * Redis paused (`CLIENT PAUSE`, as a failover or a slow `SAVE` on a small host does) longer than
 * the workers' `lockDuration` while jobs run: their locks expire unrenewed, so BullMQ refuses to
 * record their end. Before, each such job logged two errors in BullMQ's words, without the job
 * in its fields (`job=- ... worker paused: Missing lock for job <id>. moveToFinished`, then
 * `... moveToDelayed`), and nothing said why or what follows.
 */
run('Redis paused longer than lockDuration while jobs run (own redis-server)', () => {
  let server: StartedRedis;
  let moduleRef: TestingModule;
  let admin: IORedis;
  let lines: string[] = [];

  beforeAll(async () => {
    server = await startRedis();
    lines = captureWarningsAndErrors();
    moduleRef = await bootTestModule({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({
          connection: { host: '127.0.0.1', port: server.port },
          prefix: uniquePrefix('lock-lost'),
        }),
        TenantQueueModule.registerQueue({
          name: 'paused',
          attempts: 3,
          fairness: { defaultConcurrency: 2 },
        }),
      ],
      providers: [HeldProcessor],
    });
    admin = new IORedis({ host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null });
  });

  afterAll(async () => {
    release();
    await moduleRef?.close();
    admin?.disconnect();
    await server?.stop();
    jest.restoreAllMocks();
  });

  it('logs one warning per job that lost its lock, naming it, why and what follows, and no error', async () => {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue('paused');
    const ids: string[] = [];
    for (const tenant of ['acme', 'globex']) {
      for (let i = 0; i < 2; i++) ids.push((await queue.addForTenant(tenant, 'held', {})).id);
    }
    await waitFor(() => new Set(runs).size === 4, 'four jobs running');
    const first = [...runs];

    await admin.call('CLIENT', 'PAUSE', String(LOCK_MS * 3), 'ALL');
    await sleep(LOCK_MS * 3);
    const bull = queue.bullQueue;
    // Every lock is gone once Redis answers again (passive expiry after the pause).
    await waitFor(
      async () =>
        (await Promise.all(first.map((id) => admin.exists(bull.toKey(`${id}:lock`))))).every(
          (n) => n === 0,
        ),
      'the locks to expire',
    );
    release();

    const lost = () => lines.filter((line) => line.includes('lost its lock'));
    await waitFor(() => lost().length === 4, 'a warning for each job that lost its lock');
    // Each ran again (BullMQ's stalled check) and completed.
    await waitFor(
      async () =>
        (await Promise.all(ids.map((id) => bull.getJobState(id)))).every((s) => s === 'completed'),
      'every job to complete',
      30_000,
    );
    // BullMQ's second refusal of each (recording the failure) is not a second line.
    await sleep(500);
    expect(lost()).toHaveLength(4);
    for (const id of first) {
      expect(lost().filter((line) => line.includes(`job ${id} lost its lock`))).toEqual([
        expect.stringMatching(
          new RegExp(
            `^warn .*job=${id} .*worker paused: job ${id} lost its lock: .*lockDuration \\(1000 ms\\).*runs again`,
          ),
        ),
      ]);
    }
    // The run whose end BullMQ refused, and the one after the stalled check.
    for (const id of first) expect(runs.filter((ran) => ran === id)).toHaveLength(2);
    expect(lines.filter((line) => line.startsWith('error'))).toEqual([]);
    expect(
      lines.filter((line) => /Missing lock|Lock mismatch|not in the active state/.test(line)),
    ).toEqual([]);
  });
});
