import { SpanKind } from 'bullmq';
import type { Queue } from 'bullmq';
import { JobDispatcher, PreparedJob } from '../core/queues/job-dispatcher.interface';
import { replayLink } from '../core/context/replay-link';
import { ENVELOPE_KEY } from '../tenant-queue.constants';
import { TENANT_ID_ATTRIBUTE } from './otel-api';
import { ResolvedTelemetry } from './telemetry.options';

/**
 * Gives each job the trace context it was enqueued in (`opts.telemetry.metadata`, what BullMQ's
 * worker makes the parent of its `process` span), so the trace survives the fair gate, which
 * hands jobs to BullMQ later from another context. The context is the active one (e.g. the
 * HTTP server span), else the envelope's `traceparent` (the request's header, or the job that
 * enqueued this one). Tags the active span with the tenant too, unless the job is a system
 * hand-off.
 */
export function tracedDispatcher(
  inner: JobDispatcher,
  telemetry: ResolvedTelemetry | undefined,
): JobDispatcher {
  if (!telemetry) return inner;
  const { contextManager } = telemetry.bull;
  const dispatcher: JobDispatcher = {
    dispatch(queue, jobs) {
      // A dead-letter replay: enqueued under a span of its own, linked to the job it replays.
      const link = replayLink();
      if (link !== undefined) return replayed(telemetry, queue, jobs, link, dispatch);
      return dispatch(queue, jobs);
    },
  };
  const dispatch = (queue: Queue, jobs: PreparedJob[]): Promise<void> => {
    const active = contextManager.getMetadata(contextManager.active());
    const shared = active && active !== '{}' ? { metadata: active } : undefined;
    let fallback: string | undefined;
    for (const job of jobs) {
      if (job.opts.telemetry) continue;
      const telemetryOpts = shared ?? fromEnvelope(job);
      if (telemetryOpts) job.opts.telemetry = telemetryOpts;
      if (!shared) fallback ??= telemetryOpts?.metadata;
    }
    // A system hand-off (`addForTenant`, `TenantContext.run(other, ...)`) is enqueued from a
    // span of another tenant's (its running job's) or of none: that span is not the job's.
    const tenantId = isHandOff(jobs[0]) ? undefined : jobs[0]?.tenantId;
    if (tenantId !== undefined) {
      telemetry.api?.trace
        .getActiveSpan()
        ?.setAttribute(TENANT_ID_ATTRIBUTE, telemetry.label(tenantId));
    }
    if (fallback === undefined) return inner.dispatch(queue, jobs);
    // No span is active: BullMQ's producer span (`add` of a plain queue) would start a trace of
    // its own and hand it to the job in place of the envelope's. Start it in the envelope's.
    const parent = contextManager.fromMetadata(contextManager.active(), fallback);
    return contextManager.with(parent, () => inner.dispatch(queue, jobs));
  };
  return dispatcher;
}

/**
 * The span of a dead-letter replay, `replay <queue>` (producer): a child of the active span (the
 * HTTP request, the dashboard's) or a new root when none is active, with a link to the context
 * the replayed job was enqueued in and the tenant's `tenant.id`. The replay's job is enqueued in
 * it, so its `process` span is the replay span's child.
 */
function replayed(
  telemetry: ResolvedTelemetry,
  queue: Queue,
  jobs: PreparedJob[],
  traceparent: string,
  dispatch: (queue: Queue, jobs: PreparedJob[]) => Promise<void>,
): Promise<void> {
  const { tracer, contextManager } = telemetry.bull;
  const active = contextManager.active();
  const [, traceId, spanId, flags] = traceparent.split('-');
  const options = {
    kind: SpanKind.PRODUCER,
    links: [{ context: { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true } }],
  };
  const span = tracer.startSpan(`replay ${queue.name}`, options, active);
  const tenantId = jobs[0]?.tenantId;
  if (tenantId !== undefined) span.setAttribute(TENANT_ID_ATTRIBUTE, telemetry.label(tenantId));
  return contextManager
    .with(span.setSpanOnContext(active), () => dispatch(queue, jobs))
    .then(
      () => span.end(),
      (error: Error) => {
        span.recordException(error);
        span.end();
        throw error;
      },
    );
}

/** Enqueued as system work (actor `system`), not in the enqueuing context's own tenant. */
function isHandOff(job: PreparedJob | undefined): boolean {
  return (job?.data[ENVELOPE_KEY] as { actorType?: string } | undefined)?.actorType === 'system';
}

/** The W3C carrier bullmq-otel reads (`propagation.extract` of the JSON) from the envelope. */
function fromEnvelope(job: PreparedJob): { metadata: string } | undefined {
  const traceparent = (job.data[ENVELOPE_KEY] as { traceparent?: string } | undefined)?.traceparent;
  return traceparent ? { metadata: JSON.stringify({ traceparent }) } : undefined;
}
