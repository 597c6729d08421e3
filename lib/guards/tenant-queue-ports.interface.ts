import type { InjectionToken, OptionalFactoryDependency, Type } from '@nestjs/common';
import {
  ActorPermissionChecker,
  EntitlementChecker,
  TenantDirectory,
} from '../core/types/tenant-directory.interface';

/**
 * How the application supplies one port: a class the module instantiates, an existing provider
 * (visible to the module: global, or brought in through `forRootAsync({ imports })`), a factory,
 * or a ready value.
 * @publicApi
 */
export type TenantQueuePortProvider<T> =
  | { useClass: Type<T> }
  | { useExisting: InjectionToken }
  | {
      useFactory: (...args: any[]) => T | Promise<T>;
      inject?: (InjectionToken | OptionalFactoryDependency)[];
    }
  | { useValue: T };

/**
 * The application ports, given next to the other options of `forRoot(...)` or
 * `forRootAsync(...)` (they are static, so they become providers of their own).
 * @publicApi
 */
export interface TenantQueuePortOptions {
  /**
   * Where the module asks whether a tenant exists and is active (job guards, `TenantRequiredGuard`,
   * fan-out, fairness). Inject it anywhere with `@Inject(TenantDirectory)`.
   * @default every tenant id that matches `tenantIdPattern` is an active tenant; no tenant is listed
   */
  directory?: TenantQueuePortProvider<TenantDirectory>;
  /**
   * Answers `@RequiresEntitlement(...)`.
   * @default none: a processor that uses `@RequiresEntitlement` fails the bootstrap
   */
  entitlementChecker?: TenantQueuePortProvider<EntitlementChecker>;
  /**
   * Answers `@RequiresActorPermission(...)` for jobs caused by a `user` or `api_key`.
   * @default none: a processor that uses `@RequiresActorPermission` fails the bootstrap
   */
  actorPermissionChecker?: TenantQueuePortProvider<ActorPermissionChecker>;
}
