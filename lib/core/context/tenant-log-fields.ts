import { ClsServiceManager } from 'nestjs-cls';
import { ENVELOPE_KEY } from '../../tenant-queue.constants';
import { TENANT_STATE, TenantState } from './tenant-state';

/**
 * What a log line names explicitly; anything missing is read from the current context.
 * @publicApi
 */
export interface TenantLogRef {
  tenantId?: string;
  jobId?: string;
  correlationId?: string;
}

/**
 * `tenant=<id> job=<id> correlation=<id>` for the current tenant context (or `ref`), `-` where
 * unknown. Every log line of the module starts with it, so logs can be filtered per tenant.
 * @publicApi
 */
export function tenantLogFields(ref: TenantLogRef = {}): string {
  const cls = ClsServiceManager.getClsService();
  const active = cls.isActive();
  const state = active ? cls.get<TenantState | undefined>(TENANT_STATE) : undefined;
  const tenantId = ref.tenantId ?? state?.tenantId;
  const jobId = ref.jobId ?? state?.jobId;
  const correlationId = ref.correlationId ?? state?.correlationId;
  return `tenant=${tenantId ?? '-'} job=${jobId ?? '-'} correlation=${correlationId ?? '-'}`;
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
