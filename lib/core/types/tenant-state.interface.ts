import { TenantActor } from './actor.interface';
import { TenantEnvelope, TenantResolutionStrategy } from './tenant-envelope.interface';

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
  /** @internal The job attempt this context belongs to (worker side; `JobScope` finds it here). */
  attempt?: object;
  /** @internal The id of the job being processed (worker side; named in log lines). */
  jobId?: string;
}
