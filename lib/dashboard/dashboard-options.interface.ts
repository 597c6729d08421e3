import { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import { TenantQueueControls } from '../metrics';

/**
 * Options of `TenantQueueDashboardModule.register`.
 * @publicApi
 */
export interface TenantQueueDashboardOptions {
  /**
   * Route the page is served at; its JSON endpoints live under `<path>/api`.
   * @default 'admin/queues'
   */
  path?: string;
  /**
   * Guard run before every dashboard route (page, data and the pause/resume buttons). Required:
   * `register` refuses to mount the dashboard without one unless `allowUnauthenticated` is true.
   */
  guard?: Type<CanActivate>;
  /**
   * Mount the dashboard without a guard: every tenant's figures, dead-letter reasons and the
   * pause/resume buttons open to anyone who can reach the route (a warning is logged at boot).
   * Only for a route your own network or an app-wide guard already protects.
   * @default false
   */
  allowUnauthenticated?: boolean;
  /**
   * Pause/resume implementation for the buttons. Default: the `TenantQueueControls` provider the
   * app (or the fair gate) registers globally; without any, the buttons are hidden.
   */
  controls?: Type<TenantQueueControls>;
  /** Modules the guard or the controls need. */
  imports?: ModuleMetadata['imports'];
  /**
   * How often the page refreshes itself (ms).
   * @default 5000
   */
  refreshMs?: number;
  /**
   * Tenants listed per queue: the largest lag among the most recently active and those whose
   * jobs have waited longest (`TenantQueueInspector.listTenants`).
   * @default 100
   */
  limit?: number;
  /** @default 'Tenant queues' */
  title?: string;
}

/** @internal Resolved dashboard options. */
export interface ResolvedDashboardOptions {
  path: string;
  /** True when mounted without a guard (`allowUnauthenticated`). */
  unguarded: boolean;
  refreshMs: number;
  limit: number;
  title: string;
}

export const TENANT_QUEUE_DASHBOARD_OPTIONS = Symbol('TENANT_QUEUE_DASHBOARD_OPTIONS');

/**
 * Header every dashboard POST must carry (a cross-site form cannot set it).
 * @publicApi
 */
export const DASHBOARD_ACTION_HEADER = 'x-tenant-queue-dashboard';
