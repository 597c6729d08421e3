/**
 * Issue 22, item 7: with 3,000 tenants waiting one job each, `tenant_queue_backlog` added up to
 * 1,000 (the gauge refresh listed at most 1,000 tenants), counters and gauges each picked their
 * own first 100 tenants to label, and one queue whose keys were broken made the refresh fail for
 * every queue, logged once a second. Gauges count every tenant, per queue on its own, under the
 * counters' labels.
 */
import { Logger, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Registry } from 'prom-client';
import {
  TenantContext,
  TenantQueueInspector,
  TenantQueueModule,
  TenantQueueRegistry,
} from '../../../lib';
import { FairnessStateSource } from '../../../lib/fairness/fairness-state.source';
import { TenantMetricsGauges } from '../../../lib/metrics/tenant-metrics.gauges';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { TestRedisClient, openRedis } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

const TENANTS = 3000;

describe('issue 22: the gauges count every tenant, per queue, under the labels the counters chose', () => {
  const prefix = uniquePrefix('gauges');
  const registry = new Registry();
  let moduleRef: TestingModule;
  let redis: TestRedisClient;

  beforeAll(async () => {
    redis = openRedis();
    @Module({
      imports: [
        ...testRootImports(prefix, {
          metrics: { registry, flushIntervalMs: 100, gaugeIntervalMs: 0 },
        }),
        TenantQueueModule.registerQueue({ name: 'many', fairness: {} }),
        TenantQueueModule.registerQueue({ name: 'broken' }),
        TenantQueueModule.registerQueue({ name: 'plain' }),
      ],
    })
    class GaugesModule {}
    moduleRef = await bootTestModule({ imports: [GaugesModule] });
  });

  afterAll(async () => {
    await moduleRef?.close();
    await redis?.quit();
  });

  it('sums to every waiting job over 3,000 tenants while another queue cannot be read', async () => {
    const queues = moduleRef.get(TenantQueueRegistry);
    const context = moduleRef.get(TenantContext);
    const add = (queue: string, tenant: string) =>
      context.run(tenant, () => queues.getQueue(queue).add('n', {}));
    for (let at = 0; at < TENANTS; at += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => add('many', `tenant-${at + i}`)));
    }
    await add('broken', 'someone');
    const tenantsKey = (queue: string) => `{${prefix}:${queue}}:vis:tenants`;
    await waitFor(
      async () => (await redis.zcard(tenantsKey('many'))) === TENANTS,
      'every tenant recorded',
      30_000,
    );
    // The broken queue: its tenant list is not a sorted set any more.
    await waitFor(async () => (await redis.zcard(tenantsKey('broken'))) === 1, 'the other queue');
    await redis.del(tenantsKey('broken'));
    await redis.set(tenantsKey('broken'), 'not a sorted set');

    const errors: string[] = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => {
      errors.push(String(message));
    });
    for (const tenant of ['p-1', 'p-2', 'p-3']) {
      await add('plain', tenant);
      await add('plain', tenant);
    }
    await waitFor(async () => (await redis.zcard(tenantsKey('plain'))) === 3, 'a plain queue');
    const gauges = moduleRef.get(TenantMetricsGauges);
    // Every tenant's backlog from one read of the gate per page of 1,000 tenants, not one
    // read of its whole state per tenant (at 100,000 tenants a refresh outlasted its interval).
    const source = moduleRef.get(FairnessStateSource);
    const pages = jest.spyOn(source, 'gatedCounts');
    const perTenant = jest.spyOn(source, 'getTenant');
    await gauges.refresh();
    expect(pages).toHaveBeenCalledTimes(TENANTS / 1000);
    expect(perTenant).not.toHaveBeenCalled();
    await gauges.refresh();
    jest.restoreAllMocks();

    const backlog = (await registry.getSingleMetric('tenant_queue_backlog')!.get()).values;
    const many = backlog.filter((v) => v.labels.queue === 'many');
    expect(many.reduce((sum, v) => sum + v.value, 0)).toBe(TENANTS);
    // Labels: the ones the counters chose (the first 100 tenants seen, at enqueue), the rest
    // under `other`; before, the gauges picked their own first 100, in their listing order.
    const gaugeLabels = new Set(many.map((v) => String(v.labels.tenant)));
    const first = Array.from({ length: 100 }, (_, i) => `tenant-${i}`);
    expect(gaugeLabels).toEqual(new Set([...first, 'other']));
    const labeler = moduleRef.get(TenantMetricsRecorder).labeler;
    for (const tenant of first) expect(labeler.label(tenant)).toBe(tenant);
    expect(labeler.label(`tenant-${TENANTS - 1}`)).toBe('other');
    // The same figures as the inspector's own read of each tenant.
    const inspector = moduleRef.get(TenantQueueInspector);
    for (const tenant of ['tenant-0', 'tenant-99']) {
      const gauge = many.find((v) => v.labels.tenant === tenant)!.value;
      expect(gauge).toBe((await inspector.getTenant('many', tenant)).backlog);
    }
    // A plain queue's tenants (beyond the 100 labels: under `other`) from its counters.
    const plain = backlog.filter((v) => v.labels.queue === 'plain');
    expect(plain.map((v) => [v.labels.tenant, v.value])).toEqual([['other', 6]]);
    for (const tenant of ['p-1', 'p-2', 'p-3']) {
      expect((await inspector.getTenant('plain', tenant)).backlog).toBe(2);
    }
    // The broken queue is logged once, not on every refresh.
    expect(errors.filter((e) => e.includes('"broken"'))).toHaveLength(1);
  }, 120_000);

  it('runs one refresh at a time: a refresh asked for while one runs shares it', async () => {
    const gauges = moduleRef.get(TenantMetricsGauges);
    const inspector = moduleRef.get(TenantQueueInspector);
    const reads = jest.spyOn(inspector, 'forEachTenantCount');
    try {
      await Promise.all([gauges.refresh(), gauges.refresh(), gauges.refresh()]);
      // One read per queue ('many', 'broken' and 'plain'), not three each.
      expect(reads.mock.calls.map(([queue]) => queue).sort()).toEqual(['broken', 'many', 'plain']);
      await gauges.refresh();
      expect(reads).toHaveBeenCalledTimes(6);
    } finally {
      reads.mockRestore();
    }
  });
});
