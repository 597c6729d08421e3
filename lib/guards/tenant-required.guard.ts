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
import { TenantPortUnavailableError } from './tenant-port-unavailable.error';
import { Messages } from '../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core/options/core.options';
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
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (isTenantJobContext(context)) return true;
    const tenantId = this.tenantContext.tenantId;
    if (tenantId === undefined) {
      throw new BadRequestException(Messages.tenantRequiredHttp(this.options.resolution.header));
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
