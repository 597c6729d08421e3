import { ContextId, ContextIdFactory, ContextIdResolver, ContextIdStrategy } from '@nestjs/core';
import { ClsServiceManager } from 'nestjs-cls';
import { TENANT_STATE, TenantState } from '../context/tenant-state';
import { InvalidTenantQueueOptionsError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { TenantJobRequest, TenantRequestPayload } from './tenant-job-request';

/**
 * Options of `new TenantContextIdStrategy(...)`.
 * @publicApi
 */
export interface TenantContextIdStrategyOptions {
  /**
   * How many tenants keep their durable providers. Past it, the tenant used least recently is
   * dropped: its durable instances are released to the garbage collector (Nest runs no hook on
   * request-scoped instances) and built again on that tenant's next request or job.
   * @default 10000
   */
  maxTenants?: number;
}

interface TenantSubTree {
  contextId: ContextId;
  payload: TenantRequestPayload;
}

const NO_TENANT: TenantRequestPayload = Object.freeze({ tenantId: undefined });

/**
 * A Nest `ContextIdStrategy` that keys durable providers by tenant. Apply it once, before the app
 * handles anything: `ContextIdFactory.apply(new TenantContextIdStrategy())` in `main.ts`.
 *
 * A provider declared `@Injectable({ scope: Scope.REQUEST, durable: true })` (and everything whose
 * dependencies are all durable) is then built once per tenant and shared by that tenant's HTTP
 * requests and jobs; request-scoped providers that are not durable stay per request / per job.
 * The tenant of an HTTP request is the one the module resolved into its context; the tenant of a
 * job comes from its validated envelope. With no tenant (a system job, a request without one, or
 * a tenant only known after the guards ran) every provider is built for that request alone.
 * @publicApi
 */
export class TenantContextIdStrategy implements ContextIdStrategy {
  // The only module-level state: tenant id -> the ContextId its durable instances live under.
  private readonly tenants = new Map<string, TenantSubTree>();
  private readonly maxTenants: number;

  constructor(options: TenantContextIdStrategyOptions = {}) {
    const maxTenants = options.maxTenants ?? 10_000;
    if (!Number.isInteger(maxTenants) || maxTenants < 1) {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidStrategyOption('maxTenants', maxTenants),
      );
    }
    this.maxTenants = maxTenants;
  }

  attach(contextId: ContextId, request: unknown): ContextIdResolver {
    const tenantId = this.tenantOf(request);
    if (tenantId === undefined) return { resolve: () => contextId, payload: NO_TENANT };
    const tree = this.subTree(tenantId);
    return {
      resolve: (info) => (info.isTreeDurable ? tree.contextId : contextId),
      payload: tree.payload,
    };
  }

  /**
   * The tenant of `request`: a job's from its validated envelope, an HTTP request's from the
   * module's context. Override to read a tenant the module resolves only later (e.g. from
   * `req.params` with `pathParam` resolution); return only a validated tenant id.
   */
  protected tenantOf(request: unknown): string | undefined {
    if (request instanceof TenantJobRequest) return request.tenantId;
    const cls = ClsServiceManager.getClsService();
    if (!cls.isActive()) return undefined;
    return cls.get<TenantState | undefined>(TENANT_STATE)?.tenantId;
  }

  /** How many tenants currently hold durable instances (for tests and diagnostics). */
  get size(): number {
    return this.tenants.size;
  }

  private subTree(tenantId: string): TenantSubTree {
    let tree = this.tenants.get(tenantId);
    if (tree) {
      // Least recently used first: re-inserting moves the tenant to the end.
      this.tenants.delete(tenantId);
    } else {
      tree = {
        contextId: ContextIdFactory.create(),
        payload: Object.freeze({ tenantId }),
      };
      if (this.tenants.size >= this.maxTenants) {
        this.tenants.delete(this.tenants.keys().next().value as string);
      }
    }
    this.tenants.set(tenantId, tree);
    return tree;
  }
}
