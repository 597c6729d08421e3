import { DynamicModule, Module, Provider } from '@nestjs/common';
import { InvalidTenantQueueOptionsError } from '../errors';
import { TenantQueueControls } from '../metrics/tenant-queue-state-source.interface';
import { Messages } from '../tenant-queue.messages';
import {
  ResolvedDashboardOptions,
  TENANT_QUEUE_DASHBOARD_OPTIONS,
  TenantQueueDashboardOptions,
} from './dashboard-options.interface';
import { createDashboardController } from './tenant-queue-dashboard.controller';

const PATH = /^[A-Za-z0-9_~.-]+(\/[A-Za-z0-9_~.-]+)*$/;

/**
 * An HTML dashboard of every tenant's lag, backlog, in-flight jobs, failures and state, with
 * per-tenant detail and pause/resume buttons. One self-contained page (no build step, no CDN)
 * plus JSON endpoints under the same path. Needs `TenantQueueModule.forRoot` in the app.
 */
@Module({})
export class TenantQueueDashboardModule {
  static register(options: TenantQueueDashboardOptions = {}): DynamicModule {
    const resolved = resolveDashboardOptions(options);
    const providers: Provider[] = [{ provide: TENANT_QUEUE_DASHBOARD_OPTIONS, useValue: resolved }];
    if (options.guard) providers.push(options.guard);
    if (options.controls) {
      providers.push({ provide: TenantQueueControls, useClass: options.controls });
    }
    return {
      module: TenantQueueDashboardModule,
      imports: options.imports ?? [],
      providers,
      controllers: [createDashboardController(resolved.path, options.guard)],
    };
  }
}

function resolveDashboardOptions(options: TenantQueueDashboardOptions): ResolvedDashboardOptions {
  const fail = (field: string, why: string): never => {
    throw new InvalidTenantQueueOptionsError(Messages.invalidOptions(`dashboard.${field}`, why));
  };
  const path = (options.path ?? 'admin/queues').replace(/^\/+|\/+$/g, '');
  if (!PATH.test(path)) fail('path', 'must be URL path segments of [A-Za-z0-9_~.-]');
  const refreshMs = options.refreshMs ?? 5000;
  if (!Number.isInteger(refreshMs) || refreshMs < 500)
    fail('refreshMs', 'must be an integer >= 500');
  const limit = options.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) fail('limit', 'must be 1..1000');
  const title = options.title ?? 'Tenant queues';
  if (typeof title !== 'string' || title.length > 100) fail('title', 'must be a string up to 100');
  return { path, refreshMs, limit, title };
}
