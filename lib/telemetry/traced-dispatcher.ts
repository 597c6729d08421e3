import { JobDispatcher, PreparedJob } from '../core/queues/job-dispatcher.interface';
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
  return {
    dispatch(queue, jobs) {
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
    },
  };
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
