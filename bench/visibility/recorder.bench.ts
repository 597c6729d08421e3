/**
 * bench/visibility: Node CPU the visibility recorder adds per job (stage + completed event +
 * enqueue observer), in process, without Redis. The BullMQ job path costs ~65 µs of Node CPU.
 *
 *   npx ts-node --transpile-only bench/visibility/recorder.bench.ts   (N=200000)
 */
import 'reflect-metadata';
import { ClsService, ClsServiceManager } from 'nestjs-cls';
import { Registry } from 'prom-client';
import { TenantMetricsRecorder } from '../../lib/metrics/tenant-metrics.recorder';
import { TenantLabeler, resolveMetricsOptions } from '../../lib/metrics/metrics.options';
import { createMetricsSink } from '../../lib/metrics/metrics-sink.provider';
import { TenantEnvelopeCodec } from '../../lib/core/envelope/tenant-envelope.codec';

const N = Number(process.env.N ?? 200_000);
// One definition object per queue, as the module's registry keeps it.
const definition = { name: 'q', bullPrefix: '{b:q}' };
async function main() {
  const cls = ClsServiceManager.getClsService() as ClsService;
  for (const sinkName of ['none', 'prometheus'] as const) {
    const options = resolveMetricsOptions({
      connection: {},
      metrics: { sink: sinkName === 'none' ? false : 'prometheus', registry: new Registry() },
    } as never);
    const listeners: Record<string, (job: unknown) => void> = {};
    const recorder = new TenantMetricsRecorder(
      {} as never,
      new TenantEnvelopeCodec({
        tenantIdPattern: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
        envelope: { secrets: [] },
      } as never),
      options,
      createMetricsSink(options),
      { close: async () => undefined } as never,
      new TenantLabeler(options),
    );
    recorder.attach(
      { on: (e: string, f: (job: unknown) => void) => (listeners[e] = f) } as never,
      definition as never,
    );
    const next = () => Promise.resolve('ok');
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) {
      const tenantId = `tenant-${i % 100}`;
      const envelope = { tenantId, enqueuedAt: new Date().toISOString() } as never;
      const job = {
        id: `j${i}`,
        attemptsMade: 0,
        attemptsStarted: 1,
        timestamp: Date.now(),
        processedOn: Date.now(),
        finishedOn: Date.now(),
        opts: {},
        tenant: envelope,
        data: {},
      };
      await cls.run(() => recorder.run({ job, definition, envelope } as never, next));
      listeners.completed(job);
      (recorder as any).enqueued(definition, [{ opts: { jobId: `j${i}` }, tenantId }]);
    }
    const perJob = Number(process.hrtime.bigint() - t0) / N / 1000;
    // Baseline: the same loop without the recorder (cls.run + next only).
    const b0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) {
      const envelope = { tenantId: `tenant-${i % 100}`, enqueuedAt: new Date().toISOString() };
      const job = {
        id: `j${i}`,
        attemptsMade: 0,
        timestamp: Date.now(),
        opts: {},
        tenant: envelope,
      };
      await cls.run(() => next().then(() => job));
    }
    const base = Number(process.hrtime.bigint() - b0) / N / 1000;
    console.log(
      JSON.stringify({
        sink: sinkName,
        usPerJobWithRecorder: +perJob.toFixed(2),
        usPerJobBaseline: +base.toFixed(2),
        recorderUs: +(perJob - base).toFixed(2),
      }),
    );
  }
}
main();
