import {
  BadRequestException,
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
} from '@nestjs/common';
import { TenantContext } from '../context/tenant-context';
import { Messages } from '../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../tenant-queue.options';
import { isTenantJobContext } from './is-tenant-job-context';

/** HTTP guard: refuses a request that carries no tenant (400) before it can enqueue anything. */
@Injectable()
export class TenantRequiredGuard implements CanActivate {
  constructor(
    private readonly tenantContext: TenantContext,
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    if (isTenantJobContext(context)) return true;
    if (this.tenantContext.tenantId === undefined) {
      throw new BadRequestException(Messages.tenantRequiredHttp(this.options.resolution.header));
    }
    return true;
  }
}
