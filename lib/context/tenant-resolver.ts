import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { Messages } from '../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../tenant-queue.options';
import { TenantResolverName } from '../interfaces/tenant-queue-options.interface';
import { TRACEPARENT } from '../envelope/tenant-envelope.dto';
import { TenantState } from './tenant-state';

/** Strategies whose input exists only after routing or authentication. */
const LATE: ReadonlySet<TenantResolverName> = new Set(['jwtClaim', 'pathParam']);
const CORRELATION = /^[\x21-\x7e]{1,128}$/;

/** Maps an HTTP request to a tenant with the configured strategies, in order. */
@Injectable()
export class TenantResolver {
  private readonly early: boolean;

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
  ) {
    this.early = !options.resolution.order.some((name) => LATE.has(name));
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

  /** Resolves what is still open on a request-bound state. Safe to call on every read. */
  settle(state: TenantState): void {
    const req = state.request;
    if (req === undefined) return;
    if (state.tenantId === undefined) {
      for (const name of this.options.resolution.order) {
        const value = this.validated(this.read(name, req));
        if (value !== undefined) {
          state.tenantId = value;
          state.strategy = name;
          break;
        }
      }
    }
    if (state.actor === undefined || state.actor.type === 'anonymous') {
      state.actor = this.options.resolveActor(req);
    }
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
