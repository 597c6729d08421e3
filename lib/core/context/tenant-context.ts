import { Injectable } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { MissingTenantError } from '../errors';
import { TenantActor } from '../types/actor.interface';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { Messages } from '../../tenant-queue.messages';
import { TenantEnvelopeCodec } from '../envelope/tenant-envelope.codec';
import { TenantResolver } from './tenant-resolver';
import { JobTenantState, TENANT_STATE, TenantState, stateFromEnvelope } from './tenant-state';

/**
 * Input of `TenantContext.run`: a tenant id, an envelope, or a partial state.
 * @publicApi
 */
export type TenantRunInput = string | TenantEnvelope | (TenantState & { tenantId: string });

/**
 * The tenant of the current HTTP request or job. A facade over nestjs-cls: inject it anywhere;
 * it reads the context of the code that calls it.
 * @publicApi
 */
@Injectable()
export class TenantContext {
  constructor(
    private readonly cls: ClsService,
    private readonly resolver: TenantResolver,
    private readonly codec: TenantEnvelopeCodec,
  ) {}

  /** The tenant id, or undefined outside a tenant context. */
  get tenantId(): string | undefined {
    return this.state()?.tenantId;
  }

  /** The tenant id; throws `MissingTenantError` when there is none. */
  getTenantIdOrThrow(): string {
    const state = this.state();
    const tenantId = state?.tenantId;
    if (tenantId !== undefined) return tenantId;
    throw new MissingTenantError(
      state instanceof JobTenantState && state.ended
        ? Messages.missingTenantAfterJobInContext(state.jobId)
        : Messages.missingTenantInContext(),
    );
  }

  get actor(): TenantActor | undefined {
    return this.state()?.actor;
  }

  get correlationId(): string | undefined {
    return this.state()?.correlationId;
  }

  get locale(): string | undefined {
    return this.state()?.locale;
  }

  get environment(): string | undefined {
    return this.state()?.environment;
  }

  /** W3C `traceparent` of the request, or of the request that enqueued the running job. */
  get traceparent(): string | undefined {
    return this.state()?.traceparent;
  }

  /** The trace id (32 hex) of `traceparent`, for logs and trace lookups. */
  get traceId(): string | undefined {
    return this.traceparent?.slice(3, 35);
  }

  /** The envelope of the job being processed; undefined in HTTP requests. */
  get envelope(): TenantEnvelope | undefined {
    return this.state()?.envelope;
  }

  /** A snapshot of the whole context (for logs or hand-off). */
  snapshot(): Readonly<TenantState> | undefined {
    const state = this.state();
    if (!state) return undefined;
    const {
      request: _request,
      attempt: _attempt,
      ended: _ended,
      ...rest
    } = state as TenantState & {
      ended?: boolean;
    };
    return rest;
  }

  /**
   * Runs `fn` in a child context bound to a tenant (for scripts, tests and system work). The
   * tenant id is validated like any other. Given a tenant id, the actor is `system`, the
   * correlation id the current context's (a request's or a running job's) and the envelope's
   * `strategy` `system`, as `addForTenant` gives them.
   */
  run<T>(input: TenantRunInput, fn: () => T): T {
    // Read as stored: the correlation id is set with the state, and settling a request's tenant
    // here could refuse it before `fn` asked for it.
    const current = this.cls.isActive()
      ? this.cls.get<TenantState | undefined>(TENANT_STATE)
      : undefined;
    // Anything but an object is taken as an id, so `undefined` is refused as an invalid id.
    const next: TenantState =
      typeof input !== 'object' || input === null
        ? {
            tenantId: input,
            actor: { type: 'system' },
            correlationId: current?.correlationId,
            strategy: 'system',
          }
        : toState(input);
    this.codec.assertTenantId(next.tenantId);
    // Inside a job, the child context still belongs to the job's attempt (its JobScope).
    const attempt = current?.attempt;
    if (attempt !== undefined) next.attempt = attempt;
    return this.cls.run(() => {
      this.cls.set(TENANT_STATE, next);
      return fn();
    });
  }

  /** @internal Raw state for the module's own producer and runner. */
  state(): TenantState | undefined {
    if (!this.cls.isActive()) return undefined;
    const state = this.cls.get<TenantState | undefined>(TENANT_STATE);
    if (state?.request !== undefined) this.resolver.settle(state);
    return state;
  }
}

function toState(input: TenantEnvelope | (TenantState & { tenantId: string })): TenantState {
  if ('v' in input && 'actorType' in input) return stateFromEnvelope(input);
  return { actor: { type: 'system' }, ...input, request: undefined };
}
