import { TenantActor } from '../interfaces/actor.interface';
import { TenantEnvelope, TenantResolutionStrategy } from '../interfaces/tenant-envelope.interface';

/** What the module keeps in the CLS store: one object under one Symbol key. */
export interface TenantState {
  tenantId?: string;
  actor?: TenantActor;
  correlationId?: string;
  locale?: string;
  environment?: string;
  strategy?: TenantResolutionStrategy;
  /** W3C trace context carried from the HTTP request into the job. */
  traceparent?: string;
  /** The envelope of the job being processed (worker side only). */
  envelope?: TenantEnvelope;
  /** HTTP request whose tenant and actor are resolved on first read (after auth and routing). */
  request?: unknown;
}

export const TENANT_STATE = Symbol('tenant-queue:state');

/** The context a job runs in, restored from its envelope. */
export function stateFromEnvelope(envelope: TenantEnvelope): TenantState {
  return {
    tenantId: envelope.tenantId,
    actor: { type: envelope.actorType, id: envelope.actorId },
    correlationId: envelope.correlationId,
    locale: envelope.locale,
    environment: envelope.environment,
    strategy: envelope.strategy,
    traceparent: envelope.traceparent,
    envelope,
  };
}
