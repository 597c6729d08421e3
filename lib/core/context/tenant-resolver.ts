import { BadRequestException, ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { TenantSourceConflictError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../options/core.options';
import { isTenantIdOf } from '../envelope/tenant-id';
import { TenantResolverName } from '../types/core-options.interface';
import { TRACEPARENT } from '../envelope/tenant-envelope.dto';
import { TenantState } from './tenant-state';
import { RESOLUTION_STRATEGIES } from '../resolution/strategies';
import { TenantResolutionStrategy } from '../resolution/tenant-resolution-strategy.interface';

/** The claim an authenticated request carries; other sources must agree with it. */
const CLAIM: TenantResolverName = 'jwtClaim';
const CORRELATION = /^[\x21-\x7e]{1,128}$/;

/** Maps an HTTP request to a tenant with the configured strategies, in order. */
@Injectable()
export class TenantResolver {
  private readonly early: boolean;
  private readonly claimed: boolean;
  /** `resolution.order`'s strategies, in order. */
  private readonly order: readonly (readonly [TenantResolverName, TenantResolutionStrategy])[];
  /** Request states whose tenant was resolved before a late source could be read. */
  private readonly provisional = new WeakSet<TenantState>();

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
  ) {
    // Names were checked with the options (`RESOLVER_NAMES`).
    this.order = options.resolution.order.map(
      (name) => [name, RESOLUTION_STRATEGIES[name]] as const,
    );
    this.early = !this.order.some(([, strategy]) => strategy.late);
    this.claimed = options.resolution.order.includes(CLAIM);
  }

  /**
   * Called by the middleware: fixes the correlation id, locale and environment, validates every
   * tenant value the request already carries (400 when one is malformed), and resolves the tenant
   * now when no strategy needs to wait for routing or auth.
   */
  begin(req: any): TenantState {
    const header = req?.headers?.[this.options.correlationHeader];
    const traceparent = req?.headers?.traceparent;
    const state: TenantState = {
      traceparent:
        typeof traceparent === 'string' && TRACEPARENT.test(traceparent) ? traceparent : undefined,
      correlationId:
        typeof header === 'string' && CORRELATION.test(header)
          ? header
          : this.options.newCorrelationId(),
      locale: this.options.resolveLocale(req),
      environment: this.options.environment,
      request: req,
    };
    for (const [, strategy] of this.order) {
      if (!strategy.late) this.validated(strategy.read(req, this.options.resolution));
    }
    if (this.early) this.settle(state);
    return state;
  }

  /**
   * Resolves what is still open on a request-bound state. Safe to call on every read. A tenant
   * read before a late source (the JWT claim before auth, a path parameter before routing) could
   * answer is provisional: it is resolved again on the next read, and never cached as final.
   * When the claim is present, a header, subdomain or path parameter naming another tenant is
   * refused (403, cause `TenantSourceConflictError`).
   */
  settle(state: TenantState): void {
    const req = state.request;
    if (req === undefined) return;
    if (state.tenantId === undefined || this.provisional.has(state)) this.resolve(state, req);
    if (state.actor === undefined || state.actor.type === 'anonymous') {
      state.actor = this.options.resolveActor(req);
    }
  }

  private resolve(state: TenantState, req: any): void {
    const options = this.options.resolution;
    const claim = this.claimed
      ? this.validated(RESOLUTION_STRATEGIES[CLAIM].read(req, options))
      : undefined;
    let pending = this.claimed && req.user === undefined;
    let tenantId: string | undefined;
    let strategy: TenantResolverName | undefined;
    for (const [name, source] of this.order) {
      const value = name === CLAIM ? claim : this.validated(source.read(req, options));
      if (value === undefined) {
        // A late source (a path parameter before routing) may still answer.
        if (tenantId === undefined && source.late && name !== CLAIM) pending = true;
        continue;
      }
      if (claim !== undefined && value !== claim && source.clientWritten) {
        // Nothing downstream (logs included) keeps the provisional answer; every read refuses.
        state.tenantId = undefined;
        state.strategy = undefined;
        throw this.conflict(claim, name, value);
      }
      if (tenantId === undefined) {
        tenantId = value;
        strategy = name;
      }
    }
    state.tenantId = tenantId;
    state.strategy = strategy;
    if (pending) this.provisional.add(state);
    else this.provisional.delete(state);
  }

  private conflict(claim: string, name: TenantResolverName, value: string): ForbiddenException {
    const r = this.options.resolution;
    const message = Messages.tenantSourceConflict(
      RESOLUTION_STRATEGIES[CLAIM].describe(r),
      claim,
      RESOLUTION_STRATEGIES[name].describe(r),
      value,
    );
    return new ForbiddenException(message, {
      cause: new TenantSourceConflictError(
        message,
        { strategy: 'jwtClaim', tenantId: claim },
        { strategy: name, tenantId: value },
      ),
    });
  }

  private validated(value: string | undefined): string | undefined {
    if (value === undefined) return undefined;
    if (!isTenantIdOf(this.options.tenantIdPattern, value)) {
      throw new BadRequestException(Messages.invalidTenantId(value, this.options.tenantIdPattern));
    }
    return value;
  }
}
