import type { ArgumentsHost } from '@nestjs/common';
import { TENANT_JOB_CONTEXT_TYPE } from '../tenant-queue.constants';

/**
 * True when a guard, interceptor or filter runs for a tenant job rather than an HTTP request.
 * Global HTTP guards run on jobs too (as on microservice handlers): step aside with this.
 * @publicApi
 */
export function isTenantJobContext(context: ArgumentsHost): boolean {
  return context.getType<string>() === TENANT_JOB_CONTEXT_TYPE;
}
