import { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import { TenantQueueControls } from '../metrics/tenant-queue-state-source.interface';

/** Options of `TenantQueueDashboardModule.register`. */
export interface TenantQueueDashboardOptions {
  /**
   * Route the page is served at; its JSON endpoints live under `<path>/api`.
   * @default 'admin/queues'
   */
  path?: string;
  /**
   * Guard run before every dashboard route (page, data and the pause/resume buttons). Without
   * one the dashboard is open to anyone who can reach the route: always set one in production.
   */
  guard?: Type<CanActivate>;
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
   * Tenants listed per queue (most recently active first, then ordered by lag).
   * @default 100
   */
  limit?: number;
  /** @default 'Tenant queues' */
  title?: string;
}

/** @internal Resolved dashboard options. */
export interface ResolvedDashboardOptions {
  path: string;
  refreshMs: number;
  limit: number;
  title: string;
}

export const TENANT_QUEUE_DASHBOARD_OPTIONS = Symbol('TENANT_QUEUE_DASHBOARD_OPTIONS');

/** Header every dashboard POST must carry (a cross-site form cannot set it). */
export const DASHBOARD_ACTION_HEADER = 'x-tenant-queue-dashboard';
