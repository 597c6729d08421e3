import { randomBytes } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { Body, Controller, INestApplication, Module, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BullMQOtel } from 'bullmq-otel';
import request from 'supertest';
import {
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { installTracing, removeTracing } from '../../support/otel';
import { waitFor } from '../../support/wait';

const exporter = new InMemorySpanExporter();
const handled = new Set<string>();

async function handle(job: TenantJob<{ key: string }>) {
  if (job.data.key === 'handoff') {
    // From the job's own context (its process span active): a child of its own tenant, and a
    // hand-off to another tenant (docs/jobs.md).
    await registry.getQueue('plain').add('one', { key: 'handoff-own' });
    await registry.getQueue('fair').addForTenant('globex', 'one', { key: 'handoff-globex' });
  }
  await trace.getTracer('app').startActiveSpan(`handle ${job.data.key}`, async (span) => {
    handled.add(job.data.key);
    span.end();
  });
}

@TenantProcessor('plain', { concurrency: 2 })
class PlainProcessor extends TenantWorkerHost {
  process(job: TenantJob<{ key: string }>) {
    return handle(job);
  }
}

@TenantProcessor('fair', { concurrency: 2 })
class FairProcessor extends TenantWorkerHost {
  process(job: TenantJob<{ key: string }>) {
    return handle(job);
  }
}

let registry: TenantQueueRegistry;

@Controller('jobs')
class JobsController {
  @Post()
  async create(@Body() body: { queue: string; key: string; bulk?: boolean }) {
    const queue = registry.getQueue(body.queue);
    if (body.bulk) await queue.addBulk([{ name: 'b', data: { key: body.key } }]);
    else await queue.add('one', { key: body.key });
    return {};
  }
}

/**
 * No HTTP instrumentation: no span is active when the request enqueues, so the request's
 * `traceparent` reaches the job through its envelope alone.
 */
describe('OpenTelemetry without a server span: the trace of the traceparent header', () => {
  let app: INestApplication;

  beforeAll(async () => {
    installTracing(exporter);
    @Module({
      imports: [
        ...testRootImports(
          uniquePrefix('otelenv'),
          { telemetry: new BullMQOtel({ tracerName: 'tq-env' }), metrics: { sink: false } },
          { middleware: { mount: true } },
        ),
        TenantQueueModule.registerQueue(
          { name: 'plain', attempts: 1 },
          { name: 'fair', attempts: 1, fairness: true },
        ),
      ],
      controllers: [JobsController],
      providers: [PlainProcessor, FairProcessor],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    registry = app.get(TenantQueueRegistry);
  });

  afterAll(async () => {
    await app?.close();
    removeTracing();
  });

  it.each([
    ['plain', false],
    ['plain', true],
    ['fair', false],
    ['fair', true],
  ])("puts the %s queue's job (addBulk: %s) in the request's trace", async (queue, bulk) => {
    const key = `${queue}-${bulk}`;
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    await request(app.getHttpServer())
      .post('/jobs')
      .set('x-tenant-id', 'acme')
      .set('traceparent', `00-${traceId}-${parentId}-01`)
      .send({ queue, key, bulk })
      .expect(201);
    await waitFor(() => handled.has(key), 'the job to run');
    // Its process span ends after the handler's: one per job run on the queue so far.
    const ran = [...handled].filter((k) => k.startsWith(`${queue}-`)).length;
    await waitFor(
      () => exporter.getFinishedSpans().filter((s) => s.name === `process ${queue}`).length === ran,
      'its process span',
    );
    const spans = exporter.getFinishedSpans();
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const handler = spans.find((s) => s.name === `handle ${key}`)!;
    // Up the chain to the span whose parent is the request's (remote) span.
    const chain = [handler.name];
    let top = handler;
    while (top.parentSpanContext && byId.has(top.parentSpanContext.spanId)) {
      top = byId.get(top.parentSpanContext.spanId)!;
      chain.push(top.name);
    }
    expect({
      chain,
      traceId: handler.spanContext().traceId,
      root: top.parentSpanContext?.spanId,
    }).toEqual({ chain: expect.arrayContaining([`process ${queue}`]), traceId, root: parentId });
  });

  it("continues a job's trace into the jobs it enqueues, and keeps its span its tenant's", async () => {
    const traceId = randomBytes(16).toString('hex');
    await request(app.getHttpServer())
      .post('/jobs')
      .set('x-tenant-id', 'acme')
      .set('traceparent', `00-${traceId}-${randomBytes(8).toString('hex')}-01`)
      .send({ queue: 'plain', key: 'handoff' })
      .expect(201);
    const keys = ['handoff', 'handoff-own', 'handoff-globex'];
    await waitFor(() => keys.every((k) => handled.has(k)), 'the job and the two it enqueued');
    const spans = () => exporter.getFinishedSpans();
    const byId = () => new Map(spans().map((s) => [s.spanContext().spanId, s]));
    const processOf = (key: string) =>
      byId().get(spans().find((s) => s.name === `handle ${key}`)?.parentSpanContext?.spanId ?? '');
    await waitFor(() => keys.every((k) => processOf(k) !== undefined), 'their process spans');
    const parent = processOf('handoff')!;
    // Each enqueued job's process span descends from the enqueuing job's, in the request's trace.
    const below = (key: string) => {
      const ids = byId();
      let span = processOf(key);
      while (span && span !== parent) span = ids.get(span.parentSpanContext?.spanId ?? '');
      return span === parent;
    };
    expect(
      keys.map((k) => [k, processOf(k)!.spanContext().traceId, k === 'handoff' || below(k)]),
    ).toEqual(keys.map((k) => [k, traceId, true]));
    // The hand-off to globex leaves acme's span acme's.
    expect(keys.map((k) => [k, processOf(k)!.attributes['tenant.id']])).toEqual([
      ['handoff', 'acme'],
      ['handoff-own', 'acme'],
      ['handoff-globex', 'globex'],
    ]);
  });
});
