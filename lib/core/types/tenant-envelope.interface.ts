import { ActorType } from './actor.interface';
import type { TenantResolverName } from './core-options.interface';

/**
 * How the tenant of a job was determined.
 * @publicApi
 */
export type TenantResolutionStrategy = TenantResolverName | 'system' | 'inherited' | 'explicit';

/**
 * The `_tenant` envelope stored inside every tenant job's data.
 * @publicApi
 */
export interface TenantEnvelope {
  /** Envelope format version. */
  v: 1;
  tenantId: string;
  actorId?: string;
  actorType: ActorType;
  /** ISO-8601 instant the job was enqueued. */
  enqueuedAt: string;
  correlationId: string;
  locale?: string;
  environment?: string;
  strategy?: TenantResolutionStrategy;
  /** W3C trace context of the request (or job) that enqueued this job. */
  traceparent?: string;
  /** The job's fair key inside its tenant (the `fairKey` job option), when it has one. */
  fairKey?: string;
  /** HMAC-SHA256 of the canonical envelope, when `envelope.secret` is configured. */
  sig?: string;
}
