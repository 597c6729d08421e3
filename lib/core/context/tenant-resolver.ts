import { BadRequestException, ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { TenantSourceConflictError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core.options';
import { TenantResolverName } from '../types/core-options.interface';
import { TRACEPARENT } from '../envelope/tenant-envelope.dto';
import { TenantState } from './tenant-state';

/** Strategies whose input exists only after routing or authentication. */
const LATE: ReadonlySet<TenantResolverName> = new Set(['jwtClaim', 'pathParam']);
/** Sources the client writes itself: refused when they name another tenant than the claim. */
const UNAUTHENTICATED: ReadonlySet<TenantResolverName> = new Set([
  'header',
  'subdomain',
  'pathParam',
]);
const CORRELATION = /^[\x21-\x7e]{1,128}$/;

/** Maps an HTTP request to a tenant with the configured strategies, in order. */
@Injectable()
export class TenantResolver {
  private readonly early: boolean;
  private readonly claimed: boolean;
  /** Request states whose tenant was resolved before a late source could be read. */
  private readonly provisional = new WeakSet<TenantState>();

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
  ) {
    this.early = !options.resolution.order.some((name) => LATE.has(name));
    this.claimed = options.resolution.order.includes('jwtClaim');
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
    for (const name of this.options.resolution.order) {
      if (!LATE.has(name)) this.validated(this.read(name, req));
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
    const order = this.options.resolution.order;
    const claim = this.claimed ? this.validated(this.read('jwtClaim', req)) : undefined;
    let pending = this.claimed && req.user === undefined;
    let tenantId: string | undefined;
    let strategy: TenantResolverName | undefined;
    for (const name of order) {
      const value = name === 'jwtClaim' ? claim : this.validated(this.read(name, req));
      if (value === undefined) {
        if (tenantId === undefined && name === 'pathParam') pending = true;
        continue;
      }
      if (claim !== undefined && value !== claim && UNAUTHENTICATED.has(name)) {
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
    const source =
      name === 'header'
        ? `header "${r.header}"`
        : name === 'pathParam'
          ? `path parameter "${r.pathParam}"`
          : 'subdomain';
    const message = Messages.tenantSourceConflict(
      `JWT claim "${r.jwtClaim}"`,
      claim,
      source,
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
    if (!this.options.tenantIdPattern.test(value)) {
      throw new BadRequestException(Messages.invalidTenantId(value, this.options.tenantIdPattern));
    }
    return value;
  }

  private read(name: TenantResolverName, req: any): string | undefined {
    const r = this.options.resolution;
    switch (name) {
      case 'header':
        return asString(req?.headers?.[r.header]);
      case 'subdomain':
        return this.subdomain(req);
      case 'jwtClaim':
        return asString(readPath(req?.user, r.jwtClaim));
      case 'pathParam':
        return asString(req?.params?.[r.pathParam]);
      case 'custom':
        return asString(r.custom?.(req));
    }
  }

  private subdomain(req: any): string | undefined {
    const raw = asString(req?.hostname) ?? asString(req?.headers?.host);
    if (!raw) return undefined;
    const host = raw.replace(/:\d+$/, '').toLowerCase();
    const bases = this.options.resolution.subdomainBaseDomains;
    if (bases.length > 0) {
      const base = bases.find((b) => host.endsWith(`.${b}`));
      if (!base) return undefined;
      const sub = host.slice(0, -(base.length + 1));
      return sub && !sub.includes('.') ? sub : undefined;
    }
    const labels = host.split('.');
    if (labels.length < 3 || labels[0] === 'www' || /^\d+$/.test(labels[labels.length - 1])) {
      return undefined;
    }
    return labels[0];
  }
}

function asString(value: unknown): string | undefined {
  if (Array.isArray(value)) value = value[0];
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function readPath(source: unknown, path: string): unknown {
  let value: any = source;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}
