import { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { BullMQOtel } from 'bullmq-otel';
import {
  InMemoryTenantDirectory,
  SchedulerClock,
  TenantContext,
  TenantCron,
  TenantScheduler,
} from '../../../lib';
import { ManualClock } from '../../fixtures/scheduler-app';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { installTracing, removeTracing } from '../../support/otel';
import { waitFor } from '../../support/wait';

const exporter = new InMemorySpanExporter();
const ran: string[] = [];

@Injectable()
class Digest {
  constructor(private readonly tenant: TenantContext) {}

  @TenantCron('0 9 * * *', { name: 'digest' })
  async run(): Promise<void> {
    ran.push(this.tenant.tenantId!);
  }
}

describe('OpenTelemetry: a @TenantCron occurrence, fan-out to each tenant', () => {
  let app: TestingModule | undefined;
  const clock = new ManualClock(Date.parse('2026-05-01T08:59:00Z'));

  beforeAll(async () => {
    installTracing(exporter);
    const directory = new InMemoryTenantDirectory([{ id: 'acme' }, { id: 'globex' }]);
    app = await Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('otelcron'), {
          telemetry: new BullMQOtel({ tracerName: 'tq-cron' }),
          scheduler: { enabled: false },
          directory: { useValue: directory },
        }),
      ],
      providers: [Digest],
    })
      .overrideProvider(SchedulerClock)
      .useValue(clock)
      .compile();
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    removeTracing();
  });

  it("runs each tenant's job in the fan-out's trace, each span with its own tenant.id only", async () => {
    clock.set('2026-05-01T09:00:00.300Z');
    expect((await app!.get(TenantScheduler).tick()).enqueued).toBe(1);
    await waitFor(() => ran.length === 2, "both tenants' runs");
    const processes = () =>
      exporter.getFinishedSpans().filter((s) => s.name.startsWith('process '));
    await waitFor(() => processes().length === 3, 'the three process spans');
    const byId = new Map(exporter.getFinishedSpans().map((s) => [s.spanContext().spanId, s]));
    const fanOut = processes().find((s) => s.attributes['tenant.id'] === undefined)!;
    const descends = (span: ReadableSpan) => {
      let at: ReadableSpan | undefined = span;
      while (at && at !== fanOut) at = byId.get(at.parentSpanContext?.spanId ?? '');
      return at === fanOut;
    };
    expect(
      processes()
        .filter((s) => s !== fanOut)
        .map((s) => [s.attributes['tenant.id'], s.spanContext().traceId, descends(s)])
        .sort(),
    ).toEqual([
      ['acme', fanOut.spanContext().traceId, true],
      ['globex', fanOut.spanContext().traceId, true],
    ]);
    expect(ran.sort()).toEqual(['acme', 'globex']);
  });
});
