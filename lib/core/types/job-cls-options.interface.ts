import type { ClsService } from 'nestjs-cls';
import type { TenantJob } from './tenant-job.interface';

/**
 * What runs in each job's CLS context (and each `@OnTenantWorkerEvent` listener's) before the
 * handler, the way `@UseCls()` does it for a method: the plugins' `beforeSetup` hooks, `CLS_ID`,
 * `setup`, the plugins' `afterSetup` hooks, then the proxy providers are resolved. It runs once
 * the job's tenant is restored from its envelope, so all of them can read `TenantContext`.
 * With nothing to run (no setup, no plugin hooks, no proxy providers, no id) a job pays only its
 * bare `ClsService.run`.
 * @publicApi
 */
export interface TenantJobClsOptions {
  /** Like `@UseCls({ setup })`: put what the job's code reads from CLS (user, locale, ...). */
  setup?: (cls: ClsService, job: TenantJob) => void | Promise<void>;
  /**
   * Set `CLS_ID` (`cls.getId()`) in every job and worker event.
   * @default true when the app's `ClsModule.forRoot` has `generateId` on for its middleware,
   * guard or interceptor, or when anything else runs per job; false otherwise
   */
  generateId?: boolean;
  /**
   * The `CLS_ID` of a job.
   * @default the envelope's correlation id (the request's), or the job id for a job without one
   */
  idGenerator?: (job: TenantJob) => string;
  /**
   * Resolve the app's `@InjectableProxy` providers (registered with `ClsModule.forRoot` or
   * `forFeature`) before the handler, as `ClsGuard`/`@UseCls` do.
   * @default true
   */
  resolveProxyProviders?: boolean;
  /**
   * Run the `beforeSetup`/`afterSetup` hooks of the app's CLS plugins.
   * @default true
   */
  initializePlugins?: boolean;
}
