import { TenantQueueError } from './tenant-queue.error';

/**
 * One resolution source and the tenant it named.
 * @publicApi
 */
export interface TenantSourceReading {
  strategy: string;
  tenantId: string;
}

/**
 * A request's authenticated claim names one tenant and an unauthenticated source (header,
 * subdomain, path parameter) names another. Answered as 403 (this error is the cause); nothing
 * was enqueued.
 * @publicApi
 */
export class TenantSourceConflictError extends TenantQueueError {
  constructor(
    message: string,
    readonly claim: TenantSourceReading,
    readonly other: TenantSourceReading,
  ) {
    super(message);
  }
}
