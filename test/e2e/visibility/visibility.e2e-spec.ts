import { Body, Controller, ConsoleLogger, INestApplication, Logger, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import request from 'supertest';
import {
  DeadLetters,
  InjectTenantQueue,
  JobCancelledError,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueInspector,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../../lib';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

type Kind = 'ok' | 'fail-once' | 'fail-always' | 'cancel' | 'slow' | 'trace';
interface Work {
  kind: Kind;
}

const traces: { tenantId?: string; traceId?: string; traceparent?: string }[] = [];

@TenantProcessor('vis', { concurrency: 4, timeoutMs: 300 })
class VisProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<Work>) {
    switch (job.data.kind) {
      case 'fail-once':
        if (job.attemptsMade === 0) throw new Error('first attempt fails');
        break;
      case 'fail-always':
        throw new Error('always fails');
      case 'cancel':
        throw new JobCancelledError('NOT_ENTITLED', 'plan does not include this');
      case 'slow':
        await sleep(1000);
        break;
      case 'trace':
        traces.push({
          tenantId: this.tenant.tenantId,
          traceId: this.tenant.traceId,
          traceparent: this.tenant.traceparent,
        });
        break;
    }
    await sleep(5);
    return 'done';
  }
}

@Controller('jobs')
class JobsController {
  constructor(@InjectTenantQueue('vis') private readonly queue: TenantQueue<Work>) {}

  @Post()
  add(@Body() body: Work) {
    return this.queue.add('work', body);
  }
}

class CapturingLogger extends ConsoleLogger {
  readonly lines: string[] = [];
  override log(message: unknown) {
    this.lines.push(String(message));
  }
  override warn(message: unknown) {
    this.lines.push(String(message));
  }
  override error(message: unknown) {
    this.lines.push(String(message));
  }
}

describe('visibility: metrics, tenant-tagged logs, trace context, inspector', () => {
  const prefix = uniquePrefix('vis');
  const registry = new Registry();
  const logger = new CapturingLogger();
  let app: INestApplication;
  let queue: TenantQueue<Work>;
  let recorder: TenantMetricsRecorder;
  let inspector: TenantQueueInspector;

  beforeAll(async () => {
    Logger.overrideLogger(logger);
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(
          prefix,
          { metrics: { registry, maxTenantLabels: 2, flushIntervalMs: 100, gaugeIntervalMs: 0 } },
          { middleware: { mount: true } },
        ),
        TenantQueueModule.registerQueue({
          name: 'vis',
          attempts: 2,
          backoff: { type: 'fixed', delay: 20 },
        }),
      ],
      controllers: [JobsController],
      providers: [VisProcessor],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    await app.init();
    queue = app.get('TenantQueue:vis');
    recorder = app.get(TenantMetricsRecorder);
    inspector = app.get(TenantQueueInspector);
  });

  afterAll(async () => {
    await app?.close();
    Logger.overrideLogger(new ConsoleLogger());
  });

  const value = async (name: string, labels: Record<string, string>) => {
    const metric = await registry.getSingleMetric(name)!.get();
    return metric.values
      .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
      .reduce((sum, v) => sum + v.value, 0);
  };

  it('counts every outcome exactly, per tenant, with plausible lag buckets', async () => {
    const tenant = app.get(TenantContext);
    const plan: [string, Kind, number][] = [
      ['acme', 'ok', 5],
      ['acme', 'fail-once', 1],
      ['acme', 'fail-always', 1],
      ['acme', 'cancel', 1],
      ['globex', 'ok', 3],
      ['globex', 'slow', 1],
      ['initech', 'ok', 2],
    ];
    const deadLetters = app.get(DeadLetters);
    let expectedFinal = 0;
    for (const [tenantId, kind, count] of plan) {
      expectedFinal += count;
      await tenant.run(tenantId, () =>
        queue.addBulk(Array.from({ length: count }, () => ({ name: 'work', data: { kind } }))),
      );
    }
    const finished = async () =>
      (await value('tenant_queue_jobs_total', { result: 'completed' })) +
        (await value('tenant_queue_jobs_total', { result: 'cancelled' })) +
        (await value('tenant_queue_jobs_total', { result: 'dead_lettered' })) ===
      expectedFinal;
    await waitFor(finished, 'every job to end', 30_000);

    const results = (tenantLabel: string, result: string, reason?: string) =>
      value('tenant_queue_jobs_total', {
        queue: 'vis',
        tenant: tenantLabel,
        result,
        ...(reason === undefined ? {} : { reason }),
      });
    expect(await results('acme', 'completed')).toBe(6);
    expect(await results('acme', 'failed')).toBe(2);
    expect(await results('acme', 'dead_lettered', 'ATTEMPTS_EXHAUSTED')).toBe(1);
    expect(await results('acme', 'cancelled', 'NOT_ENTITLED')).toBe(1);
    expect(await results('globex', 'completed')).toBe(3);
    expect(await results('globex', 'timed_out')).toBe(1);
    expect(await results('globex', 'dead_lettered', 'TIMEOUT')).toBe(1);
    // maxTenantLabels: 2 -> the third tenant is folded into `other`.
    expect(await results('other', 'completed')).toBe(2);
    expect(await results('initech', 'completed')).toBe(0);

    const lag = async (tenantLabel: string, suffix: string, le?: string) => {
      const metric = await registry.getSingleMetric('tenant_queue_scheduling_lag_seconds')!.get();
      return metric.values
        .filter(
          (v) =>
            (v as { metricName?: string }).metricName! ===
              `tenant_queue_scheduling_lag_seconds${suffix}` &&
            v.labels.tenant === tenantLabel &&
            (le === undefined || String(v.labels.le) === le),
        )
        .reduce((sum, v) => sum + v.value, 0);
    };
    // One lag sample per job (first attempt only), every one of them under a minute.
    expect(await lag('acme', '_count')).toBe(8);
    expect(await lag('globex', '_count')).toBe(4);
    expect(await lag('acme', '_bucket', '60')).toBe(8);
    expect(await lag('acme', '_bucket', '0.005')).toBeLessThanOrEqual(8);
    const run = await registry.getSingleMetric('tenant_queue_run_duration_seconds')!.get();
    const runCount = (t: string) =>
      run.values
        .filter(
          (v) =>
            (v as { metricName?: string }).metricName!.endsWith('_count') && v.labels.tenant === t,
        )
        .reduce((sum, v) => sum + v.value, 0);
    expect(runCount('acme')).toBe(10); // 5 + 2 + 2 + 1 attempts
    expect(runCount('globex')).toBe(5); // 3 + 2 attempts
    const slowRuns = run.values.find(
      (v) =>
        (v as { metricName?: string }).metricName!.endsWith('_bucket') &&
        v.labels.tenant === 'globex' &&
        v.labels.le === 0.25,
    );
    expect(slowRuns?.value).toBe(3); // the two slow attempts ran ~300 ms, the others < 250 ms

    // The same figures, cluster-wide, from Redis.
    await waitFor(async () => (await deadLetters.list('acme')).total === 1, 'acme dead letter');
    await recorder.flush();
    const acme = await inspector.getTenant('vis', 'acme');
    expect(acme.results).toEqual({
      completed: 6,
      failed: 2,
      timedOut: 0,
      cancelled: 1,
      deadLettered: 1,
    });
    expect(acme).toMatchObject({ backlog: 0, inFlight: 0, deadLetters: 1, paused: false });
    expect(acme.lag.samples).toBe(8);
    expect(acme.lag.p50).not.toBeNull();
    expect(acme.lag.p99!).toBeLessThan(60_000);
    const globex = await inspector.getTenant('vis', 'globex');
    expect(globex.results).toMatchObject({ completed: 3, timedOut: 1, deadLettered: 1 });
    expect(globex.deadLetters).toBe(1);
  });

  it('tags the module log lines with tenant, job and correlation ids', () => {
    const cancelled = logger.lines.find((line) => line.includes('cancelled: NOT_ENTITLED'));
    expect(cancelled).toMatch(/^tenant=acme job=[\w-]+ correlation=[\w-]+ /);
    const dead = logger.lines.filter((line) => line.includes('dead-lettered'));
    expect(dead.length).toBe(2);
    for (const line of dead) expect(line).toMatch(/^tenant=(acme|globex) job=[\w-]+ correlation=/);
  });

  it('carries the W3C trace context from the HTTP request into the job', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const traceparent = `00-${traceId}-00f067aa0ba902b7-01`;
    await request(app.getHttpServer())
      .post('/jobs')
      .set('x-tenant-id', 'acme')
      .set('traceparent', traceparent)
      .send({ kind: 'trace' })
      .expect(201);
    await request(app.getHttpServer())
      .post('/jobs')
      .set('x-tenant-id', 'globex')
      .set('traceparent', '00-not-a-trace-01')
      .send({ kind: 'trace' })
      .expect(201);
    await waitFor(() => traces.length === 2, 'both trace jobs');
    expect(traces).toContainEqual({ tenantId: 'acme', traceId, traceparent });
    expect(traces).toContainEqual({
      tenantId: 'globex',
      traceId: undefined,
      traceparent: undefined,
    });
  });
});
