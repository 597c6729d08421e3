import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Registry } from 'prom-client';
import {
  TenantContext,
  TenantProcessor,
  TenantQueueInspector,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { TenantMetricsGauges } from '../../../lib/metrics/tenant-metrics.gauges';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

/** Names every plain object inherits: a tenant-keyed `{}` would find something under each. */
const IDS = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];

describe('the inspector with tenant ids named like Object.prototype members', () => {
  let moduleRef: TestingModule | undefined;
  afterAll(() => moduleRef?.close());

  it('lists, reads and gauges each of them as a tenant of its own', async () => {
    @TenantProcessor('protos', { concurrency: 4 })
    class ProtoProcessor extends TenantWorkerHost {
      async process() {}
    }
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('protos'), {
          tenantIdPattern: /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/,
          metrics: { registry: new Registry(), flushIntervalMs: 100, gaugeIntervalMs: 0 },
        }),
        TenantQueueModule.registerQueue({ name: 'protos' }),
      ],
      providers: [ProtoProcessor],
    })
    class ProtoAppModule {}
    moduleRef = await bootTestModule({ imports: [ProtoAppModule] });
    const queue = moduleRef.get(TenantQueueRegistry).getQueue('protos');
    const context = moduleRef.get(TenantContext);
    for (const [i, id] of IDS.entries()) {
      await context.run(id, () =>
        queue.addBulk(Array.from({ length: i + 1 }, () => ({ name: 'n', data: {} }))),
      );
    }
    await waitFor(async () => (await queue.bullQueue.getCompletedCount()) === 15, 'every job');
    const inspector = moduleRef.get(TenantQueueInspector);
    // The worker counts a job on its 'completed' event, which may come after another client
    // already reads the job completed (a loaded host): flush until every count is in.
    await waitFor(async () => {
      await moduleRef!.get(TenantMetricsRecorder).flush();
      const all = await Promise.all(IDS.map((id) => inspector.getTenant('protos', id)));
      return all.every((stats, i) => stats.results.completed === i + 1);
    }, "every job's completion counted");

    const listed = await inspector.listTenants({ queue: 'protos' });
    expect(listed.map((s) => s.tenantId).sort()).toEqual([...IDS].sort());
    for (const [i, id] of IDS.entries()) {
      const stats = await inspector.getTenant('protos', id);
      expect(stats).toMatchObject({ tenantId: id, backlog: 0, inFlight: 0, deadLetters: 0 });
      expect(stats.results.completed).toBe(i + 1);
      expect(stats.lag.samples).toBe(i + 1);
      expect(listed.find((s) => s.tenantId === id)?.results.completed).toBe(i + 1);
    }
    await expect(moduleRef.get(TenantMetricsGauges).refresh()).resolves.toBeUndefined();
  }, 30_000);
});

describe('the inspector with a tenant called "-" beside system jobs (no tenant)', () => {
  let moduleRef: TestingModule | undefined;
  afterAll(() => moduleRef?.close());

  it('counts the tenant "-" alone: system jobs have a slot no tenant id can name', async () => {
    @TenantProcessor('dash', { concurrency: 4 })
    class DashProcessor extends TenantWorkerHost {
      async process() {}
    }
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('dash'), {
          tenantIdPattern: /^[-a-z]{1,64}$/,
          metrics: { registry: new Registry(), flushIntervalMs: 100, gaugeIntervalMs: 0 },
        }),
        TenantQueueModule.registerQueue({ name: 'dash', systemJobs: ['sweep'] }),
      ],
      providers: [DashProcessor],
    })
    class DashAppModule {}
    moduleRef = await bootTestModule({ imports: [DashAppModule] });
    const queue = moduleRef.get(TenantQueueRegistry).getQueue('dash');
    await queue.addForTenant('-', 'n', {});
    await queue.addForTenant('-', 'n', {});
    await queue.addForTenant('acme', 'n', {});
    // Two system jobs, added as BullMQ's own clients add them: no envelope.
    await queue.bullQueue.add('sweep', {});
    await queue.bullQueue.add('sweep', {});
    await queue.bullQueue.add('sweep', {});
    await waitFor(async () => (await queue.bullQueue.getCompletedCount()) === 6, 'every job');
    const inspector = moduleRef.get(TenantQueueInspector);
    // Counted on the worker's 'completed' event, which may come after this read (see above).
    await waitFor(async () => {
      await moduleRef!.get(TenantMetricsRecorder).flush();
      const [dash, acme] = await Promise.all(
        ['-', 'acme'].map((id) => inspector.getTenant('dash', id)),
      );
      return dash.results.completed === 2 && acme.results.completed === 1;
    }, "every job's completion counted");

    const listed = await inspector.listTenants({ queue: 'dash' });
    expect(listed.map((s) => s.tenantId).sort()).toEqual(['-', 'acme']);
    expect((await inspector.getTenant('dash', '-')).results.completed).toBe(2);
    expect(listed.find((s) => s.tenantId === '-')?.results.completed).toBe(2);
  }, 30_000);
});
