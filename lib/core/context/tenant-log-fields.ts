import { ClsServiceManager } from 'nestjs-cls';
import { ENVELOPE_KEY } from '../../tenant-queue.constants';
import { TENANT_STATE, TenantState } from './tenant-state';
import { escapeChar } from '../logging/tenant-queue-logger';

/**
 * What a log line names explicitly; anything missing is read from the current context.
 * @publicApi
 */
export interface TenantLogRef {
  tenantId?: string;
  jobId?: string;
  correlationId?: string;
}

/** Characters a field value is quoted and escaped for: space, controls, quotes, line breaks. */
const UNSAFE = /[\x00-\x20\x7f-\x9f"\\\u2028\u2029]/;
const EVERY_UNSAFE = new RegExp(UNSAFE.source, 'g');

/**
 * A field's value as written: `-` when unknown; as is when it has no space, control character,
 * quote or line break (any id of the default pattern); else quoted, with those characters as
 * `\uXXXX`, so an id cannot end the line or forge another field.
 */
function logValue(value: string | undefined): string {
  if (value === undefined) return '-';
  if (value !== '' && value !== '-' && !UNSAFE.test(value)) return value;
  return `"${value.replace(EVERY_UNSAFE, escapeChar)}"`;
}

/**
 * `tenant=<id> job=<id> correlation=<id>` for the current tenant context (or `ref`), `-` where
 * unknown. Every log line of the module starts with it, so logs can be filtered per tenant. A
 * value with a space, control character, quote or line break is written quoted and escaped.
 * @publicApi
 */
export function tenantLogFields(ref: TenantLogRef = {}): string {
  const cls = ClsServiceManager.getClsService();
  const active = cls.isActive();
  const state = active ? cls.get<TenantState | undefined>(TENANT_STATE) : undefined;
  const tenantId = ref.tenantId ?? state?.tenantId;
  const jobId = ref.jobId ?? state?.jobId;
  const correlationId = ref.correlationId ?? state?.correlationId;
  return `tenant=${logValue(tenantId)} job=${logValue(jobId)} correlation=${logValue(correlationId)}`;
}

/** The log reference of a BullMQ job: its id and the tenant and correlation of its envelope. */
export function jobLogRef(job: { id?: string; data?: unknown; tenant?: unknown } | undefined) {
  if (!job) return {};
  const envelope = (job.tenant ??
    (job.data as Record<string, unknown> | undefined)?.[ENVELOPE_KEY]) as
    { tenantId?: unknown; correlationId?: unknown } | undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    jobId: job.id,
    tenantId: text(envelope?.tenantId),
    correlationId: text(envelope?.correlationId),
  };
}
