import { InvalidTenantQueueOptionsError } from '../core/errors';
import { Messages } from '../tenant-queue.messages';
import { unknownOptionWhy } from '../core/options/option-names';
import { TenantQueueMetricsOptions } from './metrics-options.interface';
import { MetricsSink } from './metrics-sink.interface';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';

/** @internal Metrics options after validation, with defaults. */
export interface ResolvedMetricsOptions {
  sink: 'prometheus' | MetricsSink | false | undefined;
  registry: unknown;
  maxTenantLabels: number;
  labelFor: ((tenantId: string) => string) | undefined;
  flushIntervalMs: number;
  windowMinutes: number;
  gaugeIntervalMs: number;
}

export const TENANT_QUEUE_METRICS_OPTIONS = Symbol('TENANT_QUEUE_METRICS_OPTIONS');

const SINK_METHODS: (keyof MetricsSink)[] = [
  'observeLag',
  'observeRunTime',
  'countResult',
  'setBacklog',
  'setInFlight',
];

function fail(field: string, why: string): never {
  throw new InvalidTenantQueueOptionsError(Messages.invalidOptions(`metrics.${field}`, why));
}

function integer(value: unknown, field: string, min: number, max: number, fallback: number) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(field, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** Validates `options.metrics` and fills in defaults; throws naming the first bad field. */
export function resolveMetricsOptions(options: {
  metrics?: TenantQueueMetricsOptions;
}): ResolvedMetricsOptions {
  const input = (options?.metrics ?? {}) as TenantQueueMetricsOptions & Record<string, unknown>;
  if (typeof input !== 'object' || input === null) fail('', 'must be an object');
  const known = [
    'sink',
    'registry',
    'maxTenantLabels',
    'labelFor',
    'flushIntervalMs',
    'windowMinutes',
    'gaugeIntervalMs',
  ];
  const extra = Object.keys(input).find((key) => !known.includes(key));
  if (extra) fail(extra, unknownOptionWhy(extra, known));
  const sink = input.sink;
  if (
    sink !== undefined &&
    sink !== false &&
    sink !== 'prometheus' &&
    !(typeof sink === 'object' && sink && SINK_METHODS.every((m) => typeof sink[m] === 'function'))
  ) {
    fail('sink', `must be 'prometheus', false, or an object with ${SINK_METHODS.join(', ')}`);
  }
  if (input.labelFor !== undefined && typeof input.labelFor !== 'function') {
    fail('labelFor', 'must be a function (tenantId) => label');
  }
  return {
    sink,
    registry: input.registry,
    maxTenantLabels: integer(input.maxTenantLabels, 'maxTenantLabels', 0, 100_000, 100),
    labelFor: input.labelFor,
    flushIntervalMs: integer(input.flushIntervalMs, 'flushIntervalMs', 50, 60_000, 1000),
    windowMinutes: integer(input.windowMinutes, 'windowMinutes', 1, 60, 5),
    gaugeIntervalMs: integer(input.gaugeIntervalMs, 'gaugeIntervalMs', 0, 3_600_000, 15_000),
  };
}

/** Folds tenant ids into a bounded set of metric labels (per process). */
export class TenantLabeler {
  private readonly labels = new Set<string>();
  private warned = false;

  constructor(private readonly options: ResolvedMetricsOptions) {}

  label(tenantId: string | undefined): string {
    if (tenantId === undefined) return 'none';
    if (this.options.labelFor) return this.custom(this.options.labelFor, tenantId);
    if (this.labels.has(tenantId)) return tenantId;
    if (this.labels.size < this.options.maxTenantLabels) {
      this.labels.add(tenantId);
      return tenantId;
    }
    return 'other';
  }

  /**
   * `labelFor`'s label, or `other` when it throws or gives no string: a label is asked for after
   * a job is written and while it runs, where a throw would fail an `add()` that wrote its job
   * (the caller would enqueue it again) and fail the job.
   */
  private custom(labelFor: (tenantId: string) => string, tenantId: string): string {
    let label: unknown;
    try {
      label = labelFor(tenantId);
    } catch (error) {
      label = error;
    }
    if (typeof label === 'string' && label !== '') return label;
    if (!this.warned) {
      this.warned = true;
      new TenantQueueLogger('TenantQueue').warn(Messages.labelForFailed(tenantId, label));
    }
    return 'other';
  }
}
