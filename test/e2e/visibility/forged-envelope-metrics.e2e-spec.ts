import { INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import {
  TenantProcessor,
  TenantQueue,
  TenantQueueDashboardModule,
  TenantQueueInspector,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../../lib';
import { signEnvelope } from '../../../lib/core/envelope/envelope-signature';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';
import { captureWarnings } from '../../support/collecting-logger';

let ran = 0;

@TenantProcessor('forged', { concurrency: 4 })
class ForgedProcessor extends TenantWorkerHost {
  async process(): Promise<void> {
    ran++;
  }
}

/** An envelope as a plain BullMQ client (or anyone with Redis write access) would write it. */
function envelope(tenantId: string, extra: Record<string, unknown> = {}) {
  return {
    v: 1,
    tenantId,
    actorType: 'system',
    enqueuedAt: new Date().toISOString(),
    correlationId: `c-${tenantId}`,
    ...extra,
  };
}

describe('a job whose envelope the worker refuses is counted under no tenant (none)', () => {
  const registry = new Registry();
  let app: INestApplication;
  let api: string;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('forged'), {
          envelope: { secret: 'the-real-secret-of-at-least-32-characters' },
          metrics: { registry, maxTenantLabels: 3, gaugeIntervalMs: 0 },
        }),
        TenantQueueModule.registerQueue({ name: 'forged', attempts: 1 }),
        TenantQueueDashboardModule.register({ allowUnauthenticated: true }),
      ],
      providers: [ForgedProcessor],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    api = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/admin/queues/api`;
  });

  afterAll(async () => {
    await app?.close();
  });

  it('never labels, records or charges a forged tenant id; the real tenants keep their labels', async () => {
    const queue = app.get<TenantQueue>('TenantQueue:forged');
    const bull = queue.bullQueue;
    // Forged in Redis: unsigned, signed with another secret, altered after signing, and
    // malformed (an unknown field), each naming an id of its own or a real tenant's.
    const forged = [
      envelope('acme'),
      envelope('mint-1'),
      envelope('mint-2', {
        sig: signEnvelope(
          envelope('mint-2') as never,
          'a-guessed-secret-of-at-least-32-characters',
        ),
      }),
      { ...envelope('acme'), tenantId: 'mint-3', sig: 'x'.repeat(43) },
      envelope('mint-4', { extra: 1 }),
    ];
    const warnings = captureWarnings();
    const ids: string[] = [];
    for (const [i, data] of forged.entries()) {
      ids.push((await bull.add('work', { i, _tenant: data }, { attempts: 1 })).id!);
    }
    await waitFor(
      async () => (await bull.getJobCounts('failed')).failed === forged.length,
      'the forged jobs to be refused',
    );
    warnings.restore();
    // Its cancellation's log line names no tenant (tenant=-): not acme's, not a minted id's.
    const cancels = warnings.lines.filter((line) => line.includes('cancelled: INVALID_ENVELOPE'));
    expect(cancels.map((line) => line.split(' ')[0])).toEqual(forged.map(() => 'tenant=-'));
    await queue.addForTenant('acme', 'work', {});
    await queue.addForTenant('globex', 'work', {});
    await waitFor(() => ran === 2, 'the two real jobs to run');
    await waitFor(
      async () =>
        (await registry.getSingleMetric('tenant_queue_jobs_total')!.get()).values.reduce(
          (sum, v) => sum + v.value,
          0,
        ) ===
        forged.length + 2,
      'every result counted',
    );

    const results = (await registry.getSingleMetric('tenant_queue_jobs_total')!.get()).values
      .map((v) => `${v.labels.tenant} ${v.labels.result} ${v.labels.reason} ${v.value}`)
      .sort();
    expect(results).toEqual([
      'acme completed  1',
      'globex completed  1',
      `none cancelled INVALID_ENVELOPE ${forged.length}`,
    ]);

    const recorder = app.get(TenantMetricsRecorder);
    await recorder.flush();
    const inspector = app.get(TenantQueueInspector);
    const acme = await inspector.getTenant('forged', 'acme');
    expect(acme.results).toMatchObject({ completed: 1, cancelled: 0 });
    const listed = (await inspector.listTenants({ queue: 'forged' })).map((t) => t.tenantId);
    expect(listed.sort()).toEqual(['acme', 'globex']);
  });

  it("shows no forged job as a tenant's on the dashboard or in explain, and acts on none", async () => {
    const inspector = app.get(TenantQueueInspector);
    const failed = await app.get<TenantQueue>('TenantQueue:forged').bullQueue.getJobs('failed');
    expect(failed.map((job) => job.failedReason)).toEqual(
      failed.map(() => expect.stringContaining('INVALID_ENVELOPE')),
    );
    const explained = await Promise.all(failed.map((job) => inspector.explain('forged', job.id!)));
    expect(explained.map((e) => [e.state, e.tenantId])).toEqual(failed.map(() => ['failed', null]));

    // The forged 'acme' job is not in acme's failed jobs, and acme's Retry cannot reach it.
    const list = (await (
      await fetch(`${api}/queues/forged/tenants/acme/jobs?state=failed`)
    ).json()) as {
      jobs: unknown[];
      total: number;
    };
    expect({ jobs: list.jobs, total: list.total }).toEqual({ jobs: [], total: 0 });
    const acmeForged = failed.find((job) => (job.data as { i: number }).i === 0)!;
    const retry = await fetch(`${api}/queues/forged/tenants/acme/jobs/${acmeForged.id}/retry`, {
      method: 'POST',
      headers: { 'x-tenant-queue-dashboard': '1' },
    });
    expect(retry.status).toBe(404);
    expect(await acmeForged.getState()).toBe('failed');
  });
});
