import { Injectable, Logger, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import IORedis, { Cluster } from 'ioredis';
import { ClsModule } from 'nestjs-cls';
import {
  EnqueueUnavailableError,
  InjectTenantQueue,
  TenantContext,
  TenantFairness,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../../lib';
import { TenantQueueRegistry } from '../../../lib';
import { StartedCluster, startRedisCluster } from '../../support/redis-cluster';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';
import { bootTestModule } from '../../support/test-module';
import { TerminusModule } from '@nestjs/terminus';
import { TenantQueueHealthIndicator } from '../../../lib/health';

const seen: { label: string; tenantId?: string }[] = [];

@TenantProcessor('clustered', { concurrency: 5 })
class ClusterProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }
  async process(job: TenantJob<{ label: string }>) {
    await new Promise((resolve) => setTimeout(resolve, 2));
    seen.push({ label: job.data.label, tenantId: this.tenant.tenantId });
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('clustered') readonly queue: TenantQueue<{ label: string }>,
    @InjectTenantQueue('clustered-2') readonly other: TenantQueue<{ label: string }>,
    readonly tenant: TenantContext,
  ) {}
}

/** The producer/worker path on a 3-master Redis Cluster: every queue's keys share one slot. */
describe('on Redis Cluster', () => {
  let cluster: StartedCluster;
  let moduleRef: TestingModule;
  let connection: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    connection = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: null } });
    @Module({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({ connection, prefix: uniquePrefix() }),
        TenantQueueModule.registerQueue(
          { name: 'clustered' },
          { name: 'clustered-2' },
          { name: 'clustered-fair', fairness: true },
        ),
      ],
      providers: [ClusterProcessor, Producer],
    })
    class AppModule {}
    moduleRef = await bootTestModule({ imports: [AppModule] });
  }, 60_000);

  afterAll(async () => {
    await moduleRef?.close();
    await connection?.quit();
    await cluster?.stop();
  });

  it('keeps tenants apart across the cluster', async () => {
    const producer = moduleRef.get(Producer);
    for (let i = 0; i < 20; i++) {
      const tenantId = i % 2 ? 'tenant-b' : 'tenant-a';
      await producer.tenant.run(tenantId, () =>
        producer.queue.add('work', { label: `${tenantId}/${i}` }),
      );
    }
    await producer.tenant.run('tenant-c', () =>
      producer.queue.addBulk(
        Array.from({ length: 10 }, (_, i) => ({ name: 'bulk', data: { label: `tenant-c/${i}` } })),
      ),
    );
    await waitFor(() => seen.length === 30, '30 jobs on the cluster');
    for (const { label, tenantId } of seen) expect(tenantId).toBe(label.split('/')[0]);
  });

  it('keeps every key of one queue in one slot', async () => {
    const { definition } = moduleRef.get(Producer).queue;
    const node = connection.nodes('master')[0];
    const slots = await Promise.all(
      ['wait', 'active', 'meta', 'id', 'events', 'completed', 'some-job-id'].map((suffix) =>
        node.call('CLUSTER', 'KEYSLOT', `${definition.bullPrefix}:${definition.name}:${suffix}`),
      ),
    );
    expect(new Set(slots).size).toBe(1);
    expect(definition.bullPrefix).toMatch(/^\{[^}]+:clustered\}$/);
  });

  it('treats a slot no master serves as Redis away: typed enqueue error, one log line, back on its own', async () => {
    const producer = moduleRef.get(Producer);
    const slot = Number(
      await connection
        .nodes('master')[0]
        .call('CLUSTER', 'KEYSLOT', producer.queue.definition.bullPrefix),
    );
    const ranges = await connection.cluster('SLOTS');
    const [, , [host, port]] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
    const owner = new IORedis({ host, port });
    const errors: string[] = [];
    const spy = jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((message: unknown) => void errors.push(String(message)));
    try {
      // The owner stops serving the slot: ioredis follows MOVED / CLUSTERDOWN until it gives up
      // with "Too many Cluster redirections", which is Redis being away, not a bug of the call.
      await owner.call('CLUSTER', 'DELSLOTS', String(slot));
      await expect(
        producer.tenant.run('tenant-a', () => producer.queue.add('work', { label: 'down' })),
      ).rejects.toBeInstanceOf(EnqueueUnavailableError);
      // The worker retries every second or so meanwhile: its outage is logged once, not per retry.
      await new Promise((resolve) => setTimeout(resolve, 4000));
      await owner.call('CLUSTER', 'ADDSLOTS', String(slot));
      const before = seen.length;
      await waitFor(async () => {
        try {
          await producer.tenant.run('tenant-a', () =>
            producer.queue.add('work', { label: 'tenant-a/back' }),
          );
          return true;
        } catch (error) {
          if (error instanceof EnqueueUnavailableError) return false;
          throw error;
        }
      }, 'an enqueue once the slot is served again');
      await waitFor(() => seen.length > before, 'the job run after the outage', 30_000);
      expect(
        errors.filter((line) => /worker clustered: .*Cluster redirections/.test(line)),
      ).toEqual([]);
    } finally {
      spy.mockRestore();
      await owner.call('CLUSTER', 'ADDSLOTS', String(slot)).catch(() => undefined);
      await owner.quit();
    }
  }, 60_000);

  it("runs no fair-gate script on the node importing the queue's slot before its keys move", async () => {
    const fairness = moduleRef.get(TenantFairness);
    const { bullPrefix } = moduleRef.get(TenantQueueRegistry).getQueue('clustered-fair').definition;
    await fairness.pause('clustered-fair', 'tenant-a');
    const slot = Number(await connection.nodes('master')[0].call('CLUSTER', 'KEYSLOT', bullPrefix));
    const ranges = await connection.cluster('SLOTS');
    const [, , [host, port, ownerId]] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
    const other = cluster.nodes.find((node) => node.port !== port)!;
    const owner = new IORedis({ host, port });
    const target = new IORedis(other);
    try {
      const targetId = String(await target.call('CLUSTER', 'MYID'));
      // An operator's resharding, started: the slot is MIGRATING on its owner, IMPORTING on the
      // target, and no key has moved yet.
      await target.call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', ownerId);
      await owner.call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', targetId);
      // The gate's keys are all on the owner: a gate script must not run on the target (it would
      // find no gate there and write a second one), it waits for the slot instead (TRYAGAIN from
      // the target, retried by ioredis between the two nodes until it gives up).
      await expect(fairness.resume('clustered-fair', 'tenant-a')).rejects.toThrow(
        /Too many Cluster redirections/,
      );
      // (A key BullMQ's worker creates meanwhile goes to the target, as Redis routes a new key.)
      const moved = (await target.call(
        'CLUSTER',
        'GETKEYSINSLOT',
        String(slot),
        '100',
      )) as string[];
      expect(moved.filter((key) => key.includes(':~fair'))).toEqual([]);
    } finally {
      for (const node of [owner, target])
        await node.call('CLUSTER', 'SETSLOT', String(slot), 'STABLE');
    }
    try {
      // The migration called off: the gate answers from its own keys again.
      await fairness.resume('clustered-fair', 'tenant-a');
      expect((await fairness.getTenant('clustered-fair', 'tenant-a')).paused).toBe(false);
    } finally {
      await owner.quit();
      await target.quit();
    }
  }, 60_000);

  it("boots with redisAtBoot: 'required' when every node answers, and enqueues", async () => {
    // The boot probe is a duplicate of the Cluster: before, its lazyConnect went into the nodes'
    // options only, so the duplicate connected at once, connect() refused ("already
    // connecting/connected") and every boot failed with RedisUnavailableAtBootError.
    const own = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: null } });
    @Module({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({
          connection: own,
          prefix: uniquePrefix(),
          redisAtBoot: 'required',
        }),
        TenantQueueModule.registerQueue({ name: 'required-boot', fairness: true }),
      ],
    })
    class RequiredModule {}
    const app = await bootTestModule({ imports: [RequiredModule] });
    try {
      const queue = app.get(TenantQueueRegistry).getQueue('required-boot');
      expect((await queue.addForTenant('tenant-a', 'x', { label: 'r' })).id).toBeTruthy();
    } finally {
      await app.close();
      await own.quit();
    }
  }, 30_000);

  it('reports Redis down on every health check while one master does not answer', async () => {
    // PING went to one master picked at random: with one of 3 silent, 7 of 12 checks said down
    // and 5 up, so a probe on it flapped.
    const own = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: null } });
    @Module({
      imports: [
        TerminusModule,
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({
          connection: own,
          prefix: uniquePrefix(),
          scheduler: { enabled: false },
        }),
      ],
      providers: [TenantQueueHealthIndicator],
    })
    class HealthModule {}
    const app = await bootTestModule({ imports: [HealthModule] });
    const node = new IORedis(cluster.nodes[2]);
    const pid = Number(/process_id:(\d+)/.exec(await node.info('server'))![1]);
    node.disconnect();
    try {
      const indicator = app.get(TenantQueueHealthIndicator);
      // 300 ms while the master is stopped (9 checks); 2 s to see it up on a busy machine.
      const redis = async (timeoutMs = 2000) =>
        ((await indicator.check('q', { timeoutMs })) as { q: { redis: string } }).q.redis;
      expect(await redis()).toBe('up');
      process.kill(pid, 'SIGSTOP');
      const replies: string[] = [];
      for (let i = 0; i < 9; i++) replies.push(await redis(300));
      expect(replies.filter((reply) => reply === 'up')).toEqual([]);
      process.kill(pid, 'SIGCONT');
      await waitFor(async () => (await redis()) === 'up', 'up again once the master answers');
    } finally {
      process.kill(pid, 'SIGCONT');
      await app.close();
      await own.quit();
    }
  }, 30_000);
});
