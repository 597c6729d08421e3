import type { Telemetry } from 'bullmq';
import { BULLMQ_VERSION, otherBullmqCopy } from '../core/bullmq';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import type { TenantQueueMetricsOptions } from '../metrics';
import { TenantLabeler, resolveMetricsOptions } from '../metrics';
import { Messages } from '../tenant-queue.messages';
import { OtelApi, loadOtelApi } from './otel-api';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';

/** @internal `options.telemetry` after validation: BullMQ's telemetry and the tenant label. */
export interface ResolvedTelemetry {
  /** Given to every queue and worker the module creates (and to adopted @nestjs/bullmq ones). */
  bull: Telemetry;
  /** `tenant.id` of a span: the tenant's metric label (bounded by `metrics.maxTenantLabels`). */
  label: (tenantId: string) => string;
  /** `@opentelemetry/api`, to tag the active span; absent with a non-OpenTelemetry `Telemetry`. */
  api: OtelApi | undefined;
}

/** Validates `options.telemetry`; `undefined` when it is not set. */
export function resolveTelemetry(options: {
  telemetry?: Telemetry;
  metrics?: TenantQueueMetricsOptions;
}): ResolvedTelemetry | undefined {
  const bull = options.telemetry;
  if (bull === undefined) return undefined;
  const manager = (bull as Partial<Telemetry> | null)?.contextManager;
  const ok =
    typeof bull === 'object' &&
    bull !== null &&
    typeof bull.tracer?.startSpan === 'function' &&
    ['active', 'with', 'getMetadata', 'fromMetadata'].every(
      (method) => typeof (manager as unknown as Record<string, unknown>)?.[method] === 'function',
    );
  if (!ok) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions(
        'telemetry',
        "must be BullMQ's Telemetry ({ tracer, contextManager }), e.g. new BullMQOtel({ tracerName: 'my-app' }) from bullmq-otel",
      ),
    );
  }
  const other = otherBullmqCopy('bullmq-otel');
  if (other) {
    new TenantQueueLogger('TenantQueue').warn(
      Messages.twoBullmqCopies('bullmq-otel', other.version, BULLMQ_VERSION, other.packageJson),
    );
  }
  const labeler = new TenantLabeler(resolveMetricsOptions(options));
  return { bull, label: (tenantId) => labeler.label(tenantId), api: loadOtelApi() };
}

/** `options.telemetry` resolved (`ResolvedTelemetry`), or undefined when it is not set. */
export const TENANT_TELEMETRY = Symbol('TENANT_TELEMETRY');
