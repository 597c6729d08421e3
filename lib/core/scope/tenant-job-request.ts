import type { TenantJob } from '../types/tenant-job.interface';

/**
 * What `@Inject(REQUEST)` gives a request-scoped (not durable) provider resolved for a job of a
 * scoped `@TenantProcessor`: the job's tenant (from its validated envelope) and the job itself.
 * A provider shared by HTTP routes and jobs can tell them apart with `instanceof TenantJobRequest`.
 * @publicApi
 */
export class TenantJobRequest<T = any> {
  constructor(
    /** The tenant of the job's envelope; undefined for a system job without a tenant. */
    readonly tenantId: string | undefined,
    readonly job: TenantJob<T>,
  ) {}
}

/**
 * What `@Inject(REQUEST)` gives a durable provider under `TenantContextIdStrategy`: the tenant it
 * was built for, whether an HTTP request or a job built it. Nothing else: a durable instance
 * outlives the request that built it, so it must not keep that request.
 * @publicApi
 */
export interface TenantRequestPayload {
  readonly tenantId: string | undefined;
}
