import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { Body, Controller, INestApplication, Module, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BullMQOtel } from 'bullmq-otel';
import { ClsModule } from 'nestjs-cls';
import request from 'supertest';
import {
  InjectTenantQueue,
  InvalidTenantQueueOptionsError,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { admissionTimes } from '../../support/admissions';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { testConnection } from '../../support/test-redis';
import { sleep, waitFor } from '../../support/wait';

const exporter = new InMemorySpanExporter();
const made: { file: string; tenantId: string | undefined }[] = [];

@TenantProcessor('thumbs', { concurrency: 2 })
class ThumbnailProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<{ file: string }>): Promise<void> {
    // The handler's own span: a child of BullMQ's process span, in the request's trace.
    await trace.getTracer('app').startActiveSpan(`make ${job.data.file}`, async (span) => {
      await sleep(20);
      made.push({ file: job.data.file, tenantId: this.tenant.tenantId });
      span.end();
    });
  }
}

@Controller('thumbnails')
class ThumbnailController {
  constructor(@InjectTenantQueue('thumbs') private readonly queue: TenantQueue<{ file: string }>) {}

  @Post()
  async create(@Body() body: { file: string }) {
    return { id: (await this.queue.add('resize', { file: body.file })).id };
  }
}

/** A hand-made HTTP server span around each request (what @opentelemetry/instrumentation-http does). */
function serverSpans(app: INestApplication): void {
  const tracer = trace.getTracer('http');
  app.use((req: any, res: any, next: () => void) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(`POST ${req.url}`, { kind: SpanKind.SERVER }, parent);
    const active = trace.setSpan(parent, span);
    res.on('finish', () => span.end());
    context.bind(active, req);
    context.bind(active, res);
    context.with(active, next);
  });
}

const traceparentOf = (traceId: string) => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;

describe('OpenTelemetry: one trace from the HTTP request through the fair gate to the handler', () => {
  let app: INestApplication;
  const contextManager = new AsyncLocalStorageContextManager();

  beforeAll(async () => {
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    context.setGlobalContextManager(contextManager.enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    @Module({
      imports: [
        ...testRootImports(
          uniquePrefix('otel'),
          {
            telemetry: new BullMQOtel({ tracerName: 'tq-test' }),
            metrics: { sink: false, maxTenantLabels: 1 },
          },
          { middleware: { mount: true } },
        ),
        // One slot per tenant: a tenant's later jobs wait in the gate, and are handed to BullMQ
        // when an earlier one completes, from that job's context, not their request's.
        TenantQueueModule.registerQueue({
          name: 'thumbs',
          attempts: 1,
          fairness: { defaultConcurrency: 1 },
        }),
      ],
      controllers: [ThumbnailController],
      providers: [ThumbnailProcessor],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    serverSpans(app);
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it('continues each request trace into its job, with tenant.id on the job and request spans', async () => {
    const requests = [
      ['acme', 'a1'],
      ['acme', 'a2'],
      ['acme', 'a3'],
      ['globex', 'g1'],
      ['acme', 'a4'],
    ].map(([tenant, file]) => ({ tenant, file, traceId: randomBytes(16).toString('hex') }));
    const server = app.getHttpServer();
    const ids = await Promise.all(
      requests.map((r) =>
        request(server)
          .post('/thumbnails')
          .set('x-tenant-id', r.tenant)
          .set('traceparent', traceparentOf(r.traceId))
          .send({ file: r.file })
          .expect(201)
          .then((res) => res.body.id as string),
      ),
    );
    await waitFor(() => made.length === requests.length, 'every thumbnail');
    await waitFor(
      () =>
        exporter.getFinishedSpans().filter((s) => s.name === 'process thumbs').length ===
        requests.length,
      'every process span',
    );
    const spans = exporter.getFinishedSpans();
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const parentOf = (span: ReadableSpan) => byId.get(span.parentSpanContext?.spanId ?? '');

    for (const r of requests) {
      const serverSpan = spans.find(
        (s) => s.kind === SpanKind.SERVER && s.spanContext().traceId === r.traceId,
      )!;
      expect(serverSpan).toBeDefined();
      const handler = spans.find((s) => s.name === `make ${r.file}`)!;
      const process = parentOf(handler)!;
      // Handler span -> BullMQ process span -> ... -> the request's server span, one trace id.
      expect([r.file, handler.spanContext().traceId]).toEqual([r.file, r.traceId]);
      expect([r.file, process.name, process.kind]).toEqual([
        r.file,
        'process thumbs',
        SpanKind.CONSUMER,
      ]);
      let ancestor: ReadableSpan | undefined = process;
      while (ancestor && ancestor !== serverSpan) ancestor = parentOf(ancestor);
      expect([r.file, ancestor?.name]).toEqual([r.file, serverSpan.name]);
      // Bounded like the metric labels: maxTenantLabels 1 keeps acme, folds globex into "other".
      const label = r.tenant === 'acme' ? 'acme' : 'other';
      expect([r.file, process.attributes['tenant.id']]).toEqual([r.file, label]);
      expect([r.file, serverSpan.attributes['tenant.id']]).toEqual([r.file, label]);
    }
    expect(made.map((m) => `${m.tenantId}:${m.file}`).sort()).toEqual(
      requests.map((r) => `${r.tenant}:${r.file}`).sort(),
    );
    // The gate handed some acme jobs to BullMQ only after their request had ended (when an earlier
    // job freed acme's slot), from another context: their trace still reached the handler.
    const bull = app.get(TenantQueueRegistry).getQueue('thumbs').bullQueue;
    // When the gate admitted each job (its `waiting` event; its timestamp is its enqueue time).
    const admitted = await admissionTimes(bull);
    const late = [];
    for (const [i, r] of requests.entries()) {
      const serverSpan = spans.find(
        (s) => s.kind === SpanKind.SERVER && s.spanContext().traceId === r.traceId,
      )!;
      const ended = serverSpan.endTime[0] * 1000 + serverSpan.endTime[1] / 1e6;
      if ((admitted.get(ids[i]) ?? 0) > ended) late.push(r.file);
    }
    expect(late.length).toBeGreaterThan(0);
  });
});

describe('telemetry option', () => {
  it('refuses a value that is not BullMQ telemetry, naming the field', async () => {
    const boot = Test.createTestingModule({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({
          connection: testConnection(),
          telemetry: { tracer: {} } as never,
        }),
      ],
    }).compile();
    await expect(boot).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(boot).rejects.toThrow(/telemetry/);
  });
});
