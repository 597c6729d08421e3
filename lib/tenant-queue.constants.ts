/**
 * Key under which the tenant envelope travels inside `job.data`.
 * @publicApi
 */
export const ENVELOPE_KEY = '_tenant';
export const ENVELOPE_VERSION = 1;

/**
 * `ExecutionContext.getType()` of a job handled by a `@TenantProcessor`.
 * @publicApi
 */
export const TENANT_JOB_CONTEXT_TYPE = 'tenant-job';

/**
 * 1-64 chars of [A-Za-z0-9_.-], starting alphanumeric. Safe inside Redis keys and job ids.
 * @publicApi
 */
export const DEFAULT_TENANT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export const DEFAULT_PREFIX = 'tq';
export const DEFAULT_TENANT_HEADER = 'x-tenant-id';
export const DEFAULT_CORRELATION_HEADER = 'x-request-id';
export const DEFAULT_JWT_CLAIM = 'tenantId';
export const DEFAULT_PATH_PARAM = 'tenantId';

export const TENANT_PROCESSOR_METADATA = 'tenant-queue:processor';
export const TENANT_WORKER_EVENT_METADATA = 'tenant-queue:worker-event';

const QUEUE_TOKEN_PREFIX = 'TenantQueue:';
const QUEUE_DEFINITION_TOKEN_PREFIX = 'TenantQueueDefinition:';

/**
 * Injection token of the `TenantQueue` registered under `name`.
 * @publicApi
 */
export function getTenantQueueToken(name: string): string {
  return `${QUEUE_TOKEN_PREFIX}${name}`;
}

export function getQueueDefinitionToken(name: string): string {
  return `${QUEUE_DEFINITION_TOKEN_PREFIX}${name}`;
}

/**
 * BullMQ prefix for one queue: a Redis Cluster hash tag per queue, so BullMQ's keys and this
 * module's keys for that queue share one slot. A queue of a key group (a fairness budget) takes
 * the group's hash tag and its own name after it (`{<prefix>:<group>}:<queue>`), so every key
 * of every queue of the group is in one slot and each queue's keys stay its own.
 */
export function bullPrefixFor(prefix: string, queueName: string, group?: string): string {
  if (group !== undefined) return `{${prefix}:${group}}:${queueName}`;
  return `{${prefix}:${queueName}}`;
}

/** The longest tenant id a job envelope carries (whatever `tenantIdPattern` admits). */
export const MAX_TENANT_ID_LENGTH = 64;

/**
 * The fair gate's bucket of jobs without a tenant: one character longer than any tenant id can be
 * (`MAX_TENANT_ID_LENGTH`), so no tenant, whatever `tenantIdPattern` admits, shares it.
 */
export const SYSTEM_BUCKET = '~system'.padEnd(MAX_TENANT_ID_LENGTH + 1, '~');

/** Longest `fairKey` job option (printable ASCII, as the envelope's `actorId`). */
export const MAX_FAIR_KEY_LENGTH = 128;

/**
 * @internal The root's `TenantContext` under a token of its own, so `registerQueue`'s module can
 * provide `TenantContext` to the modules importing it: the same instance when a root is
 * imported, `TenantQueueRootMissingError` when none is (instead of Nest's DI error).
 */
export const TENANT_CONTEXT_OF_ROOT = Symbol('TENANT_CONTEXT_OF_ROOT');
