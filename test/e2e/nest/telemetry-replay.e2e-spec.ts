import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { BullMQOtel } from 'bullmq-otel';
import {
  DeadLetters,
  NonRetryableError,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantWorkerHost,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { installTracing, removeTracing } from '../../support/otel';
import { waitFor } from '../../support/wait';

const exporter = new InMemorySpanExporter();
const runs = new Map<string, number>();

/** Fails each job's first run for good; its replay succeeds. */
@TenantProcessor('mail', { concurrency: 2 })
class MailProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ key: string }>) {
    const n = (runs.get(job.data.key) ?? 0) + 1;
    runs.set(job.data.key, n);
    if (n === 1) throw new NonRetryableError('the mail service is down');
  }
}

@TenantProcessor('fairmail', { concurrency: 1 })
class FairMailProcessor extends MailProcessor {}

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
/** The names of a span's ancestors in its trace, nearest first. */
function ancestors(span: ReadableSpan): string[] {
  const names: string[] = [];
  for (let at = span; ;) {
    const parent = spans().find((s) => s.spanContext().spanId === parentOf(at));
    if (!parent) return names;
    names.push(parent.name);
    at = parent;
  }
}

describe('OpenTelemetry: the trace of a dead-letter replay', () => {
  let app: TestingModule;
  let deadLetters: DeadLetters;
  let mail: TenantQueue<{ key: string }>;
  let fairMail: TenantQueue<{ key: string }>;

  beforeAll(async () => {
    installTracing(exporter);
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('otelreplay'), {
          telemetry: new BullMQOtel({ tracerName: 'tq-replay' }),
          metrics: { sink: false },
        }),
        TenantQueueModule.registerQueue(
          { name: 'mail', attempts: 1 },
          { name: 'fairmail', attempts: 1, fairness: {} },
        ),
      ],
      providers: [MailProcessor, FairMailProcessor],
    })
    class AppModule {}
    app = await bootTestModule({ imports: [AppModule] });
    deadLetters = app.get(DeadLetters);
    mail = app.get<TenantQueue<{ key: string }>>('TenantQueue:mail');
    fairMail = app.get<TenantQueue<{ key: string }>>('TenantQueue:fairmail');
  });

  afterAll(async () => {
    await app?.close();
    removeTracing();
  });

  /** Enqueues `key` for acme under a span of its own; resolves with that trace id and the job id. */
  async function deadLetter(
    key: string,
    queue = mail,
  ): Promise<{ traceId: string; jobId: string }> {
    const tracer = trace.getTracer('app');
    const { traceId, jobId } = await tracer.startActiveSpan(`original ${key}`, async (span) => {
      const job = await queue.addForTenant('acme', 'send', { key });
      span.end();
      return { traceId: span.spanContext().traceId, jobId: job.id! };
    });
    await waitFor(
      async () => (await deadLetters.get('acme', jobId)) !== undefined,
      `${key}'s dead letter`,
    );
    return { traceId, jobId };
  }

  /** Replays acme's `jobId` in a span of its own (what an HTTP request's server span would be). */
  function replayInRequest(jobId: string) {
    return trace.getTracer('app').startActiveSpan('POST /replay', async (span) => {
      await deadLetters.replay('acme', jobId);
      span.end();
      return span;
    });
  }

  it("is a child of the caller's active span (an HTTP request, the dashboard), linked to the original job's trace", async () => {
    const original = await deadLetter('in-request');
    const request = await replayInRequest(original.jobId);
    await waitFor(() => runs.get('in-request') === 2, 'the replay to run');
    await waitFor(() => named('process mail').length >= 2, 'its process span');

    const [replay] = named('replay mail');
    expect(replay).toBeDefined();
    expect({
      trace: replay.spanContext().traceId,
      parent: parentOf(replay),
      kind: replay.kind,
      tenant: replay.attributes['tenant.id'],
      links: replay.links.map((l) => l.context.traceId),
    }).toEqual({
      trace: request.spanContext().traceId,
      parent: request.spanContext().spanId,
      kind: SpanKind.PRODUCER,
      tenant: 'acme',
      links: [original.traceId],
    });
    const processed = named('process mail').filter(
      (s) => s.spanContext().traceId === request.spanContext().traceId,
    );
    // Under BullMQ's `add` span of the plain queue, itself under the replay.
    expect(processed.map(ancestors)).toEqual([['add mail.send', 'replay mail', 'POST /replay']]);
  });

  it('is a new root linked to the original job when no span is active', async () => {
    const original = await deadLetter('no-span');
    exporter.reset();
    expect(trace.getActiveSpan()).toBeUndefined();
    await deadLetters.replay('acme', original.jobId);
    await waitFor(() => runs.get('no-span') === 2, 'the replay to run');
    await waitFor(() => named('process mail').length >= 1, 'its process span');

    const [replay] = named('replay mail');
    expect(replay).toBeDefined();
    expect(parentOf(replay)).toBeUndefined();
    expect(replay.spanContext().traceId).not.toBe(original.traceId);
    expect(replay.links.map((l) => l.context.traceId)).toEqual([original.traceId]);
    const [processed] = named('process mail');
    expect(processed.spanContext().traceId).toBe(replay.spanContext().traceId);
    expect(ancestors(processed)).toEqual(['add mail.send', 'replay mail']);
  });

  it('on a fair queue, the job the gate hands to BullMQ runs under the replay span', async () => {
    const original = await deadLetter('fair', fairMail);
    exporter.reset();
    const request = await replayInRequest(original.jobId);
    await waitFor(() => runs.get('fair') === 2, 'the replay to run');
    await waitFor(() => named('process fairmail').length >= 1, 'its process span');
    const [replay] = named('replay fairmail');
    expect(replay.links.map((l) => l.context.traceId)).toEqual([original.traceId]);
    const [processed] = named('process fairmail');
    expect(processed.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(ancestors(processed)).toEqual(['replay fairmail', 'POST /replay']);
  });
});
