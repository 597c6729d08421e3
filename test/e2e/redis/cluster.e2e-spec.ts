import { Injectable, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Cluster } from 'ioredis';
import { ClsModule } from 'nestjs-cls';
import {
  InjectTenantQueue,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../../lib';
import { StartedCluster, startRedisCluster } from '../../support/redis-cluster';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';
import { bootTestModule } from '../../support/test-module';

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
        TenantQueueModule.registerQueue({ name: 'clustered' }, { name: 'clustered-2' }),
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
});
