import { TenantActor } from '../types/actor.interface';
import { TenantEnvelope, TenantResolutionStrategy } from '../types/tenant-envelope.interface';
import { TenantState } from '../types/tenant-state.interface';

export type { TenantState } from '../types/tenant-state.interface';

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

/**
 * @internal The context of one job attempt, or of a worker event: one object of one fixed shape
 * per job, set once in the CLS store (the tenant and the attempt together).
 */
export class JobTenantState implements TenantState {
  tenantId: string | undefined = undefined;
  actor: TenantActor | undefined = undefined;
  correlationId: string | undefined = undefined;
  locale: string | undefined = undefined;
  environment: string | undefined = undefined;
  strategy: TenantResolutionStrategy | undefined = undefined;
  traceparent: string | undefined = undefined;
  envelope: TenantEnvelope | undefined = undefined;
  request: unknown = undefined;
  /** Set when the attempt has ended: what a late `add()` is told. */
  ended = false;

  constructor(
    readonly attempt: object | undefined,
    readonly jobId: string | undefined = undefined,
  ) {}

  /** Restores the tenant of `envelope`. */
  fill(envelope: TenantEnvelope): void {
    this.tenantId = envelope.tenantId;
    this.actor = { type: envelope.actorType, id: envelope.actorId };
    this.correlationId = envelope.correlationId;
    this.locale = envelope.locale;
    this.environment = envelope.environment;
    this.strategy = envelope.strategy;
    this.traceparent = envelope.traceparent;
    this.envelope = envelope;
  }

  /** Forgets the tenant once the attempt has ended (work it left running sees none). */
  clear(): void {
    this.ended = true;
    this.tenantId = undefined;
    this.actor = undefined;
    this.correlationId = undefined;
    this.locale = undefined;
    this.environment = undefined;
    this.strategy = undefined;
    this.traceparent = undefined;
    this.envelope = undefined;
  }
}
