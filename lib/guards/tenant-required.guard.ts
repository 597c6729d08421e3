import {
  BadRequestException,
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  ServiceUnavailableException,
} from '@nestjs/common';
import { TenantContext } from '../core/context/tenant-context';
import { TenantPortUnavailableError } from '../core/errors';
import { Messages } from '../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core/options/core.options';
import { TenantResolverName } from '../core/types/core-options.interface';
import { isTenantJobContext } from './is-tenant-job-context';
import { TenantStatusService } from './tenant-status.service';

/**
 * HTTP guard: refuses a request that carries no tenant (400), or whose tenant the
 * `TenantDirectory` does not know or holds suspended or deleted (403), before it can enqueue
 * anything. A directory that fails answers 503. Steps aside on jobs (the job guards cover them).
 * @publicApi
 */
@Injectable()
export class TenantRequiredGuard implements CanActivate {
  constructor(
    private readonly tenantContext: TenantContext,
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
    private readonly status: TenantStatusService,
  ) {
    this.sources = tenantSources(options.resolution);
  }

  /** Where a client can send the tenant, in `resolution.order`, as the 400 names them. */
  private readonly sources: readonly string[];

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (isTenantJobContext(context)) return true;
    const tenantId = this.tenantContext.tenantId;
    if (tenantId === undefined) {
      throw new BadRequestException(Messages.tenantRequiredHttp(this.sources));
    }
    let verdict;
    try {
      verdict = await this.status.check(tenantId);
    } catch (error) {
      if (!(error instanceof TenantPortUnavailableError)) throw error;
      throw new ServiceUnavailableException(Messages.tenantUnavailableHttp(tenantId), {
        cause: error,
      });
    }
    if (!verdict.allowed) throw new ForbiddenException(verdict.message);
    return true;
  }
}

function tenantSources(resolution: ResolvedTenantQueueOptions['resolution']): string[] {
  const named: Partial<Record<TenantResolverName, string>> = {
    header: `the "${resolution.header}" header`,
    subdomain: 'the subdomain',
    jwtClaim: `your credentials (their "${resolution.jwtClaim}" claim)`,
    pathParam: `the path parameter "${resolution.pathParam}"`,
  };
  // resolution.custom is the app's own: its source is not the module's to name.
  return resolution.order.flatMap((name) => named[name] ?? []);
}
