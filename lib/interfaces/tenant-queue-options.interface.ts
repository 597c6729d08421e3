import type { CoreModuleOptions } from '../core/types/core-options.interface';
import type { TenantGuardOptions } from '../guards';
import type { TenantQueueMetricsOptions } from '../metrics';
import type { TenantSchedulerOptions } from '../scheduler';

export type {
  CoreModuleOptions,
  TenantEnvelopeOptions,
  TenantResolutionOptions,
  TenantResolverName,
} from '../core/types/core-options.interface';
export type { TenantGuardOptions } from '../guards';

/**
 * `TenantQueueModule.forRoot`'s options: the kernel's, plus each feature's slice.
 * @publicApi
 */
export interface TenantQueueModuleOptions extends CoreModuleOptions {
  /** Tenant schedules and `@TenantCron`: tick interval, claim timeout, missed-run threshold. */
  scheduler?: TenantSchedulerOptions;
  /** Caching and timeouts of the job guards' calls to the application ports. */
  guards?: TenantGuardOptions;
  /** Metrics sink and tenant-label cardinality; see `TenantQueueMetricsOptions`. */
  metrics?: TenantQueueMetricsOptions;
}
