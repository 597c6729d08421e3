import {
  DynamicModule,
  Inject,
  MiddlewareConsumer,
  Module,
  NestModule,
  OnApplicationBootstrap,
  Provider,
  Type,
} from '@nestjs/common';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { TenantQueueControls } from '../metrics';
import { Messages } from '../tenant-queue.messages';
import {
  ResolvedDashboardOptions,
  TENANT_QUEUE_DASHBOARD_OPTIONS,
  TenantQueueDashboardOptions,
} from './dashboard-options.interface';
import { createDashboardController } from './tenant-queue-dashboard.controller';
import { DashboardHeadersMiddleware } from './dashboard-headers.middleware';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';

const DASHBOARD_CONTROLLER = Symbol('tenant-queue:dashboard-controller');
const PATH = /^[A-Za-z0-9_~.-]+(\/[A-Za-z0-9_~.-]+)*$/;

/**
 * An HTML dashboard of every tenant's lag, backlog, in-flight jobs, failures and state, with
 * per-tenant detail and pause/resume buttons. One self-contained page (no build step, no CDN)
 * plus JSON endpoints under the same path. Needs `TenantQueueModule.forRoot` in the app. Refuses
 * to mount without a guard unless `allowUnauthenticated: true`; every route answers with
 * anti-framing, `nosniff` and `no-store` headers.
 * @publicApi
 */
@Module({})
export class TenantQueueDashboardModule implements NestModule, OnApplicationBootstrap {
  constructor(
    @Inject(TENANT_QUEUE_DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    @Inject(DASHBOARD_CONTROLLER) private readonly controller: Type,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(DashboardHeadersMiddleware).forRoutes(this.controller);
  }

  onApplicationBootstrap(): void {
    if (this.options.unguarded) {
      new TenantQueueLogger('TenantQueueDashboard').warn(
        Messages.dashboardUnguarded(this.options.path),
      );
    }
  }

  static register(options: TenantQueueDashboardOptions = {}): DynamicModule {
    const resolved = resolveDashboardOptions(options);
    const controller = createDashboardController(resolved.path, options.guard);
    const providers: Provider[] = [
      { provide: TENANT_QUEUE_DASHBOARD_OPTIONS, useValue: resolved },
      { provide: DASHBOARD_CONTROLLER, useValue: controller },
    ];
    if (options.guard) providers.push(options.guard);
    if (options.controls) {
      providers.push({ provide: TenantQueueControls, useClass: options.controls });
    }
    return {
      module: TenantQueueDashboardModule,
      imports: options.imports ?? [],
      providers,
      controllers: [controller],
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
  if (
    options.allowUnauthenticated !== undefined &&
    typeof options.allowUnauthenticated !== 'boolean'
  )
    fail('allowUnauthenticated', 'must be a boolean');
  if (!options.guard && options.allowUnauthenticated !== true) {
    fail('guard', Messages.dashboardGuardRequired(path));
  }
  return { path, refreshMs, limit, title, unguarded: !options.guard };
}
