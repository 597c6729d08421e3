import {
  BadRequestException,
  Controller,
  ForbiddenException,
  Get,
  Header,
  HttpCode,
  Inject,
  NotFoundException,
  NotImplementedException,
  Optional,
  Param,
  Post,
  Query,
  Req,
  Type,
  UseGuards,
  CanActivate,
} from '@nestjs/common';
import { DeadLetters } from '../dead-letters/dead-letters.service';
import { TenantQueueError, UnknownTenantQueueError } from '../core/errors';
import { TenantQueueInspector } from '../metrics/tenant-queue-inspector.service';
import { TenantQueueControls } from '../metrics/tenant-queue-state-source.interface';
import { TenantScheduler } from '../scheduler/tenant-scheduler';
import { renderDashboardPage } from './dashboard-page';
import {
  DASHBOARD_ACTION_HEADER,
  ResolvedDashboardOptions,
  TENANT_QUEUE_DASHBOARD_OPTIONS,
} from './dashboard-options.interface';

/** Routes of the dashboard; `createDashboardController` mounts them at the configured path. */
export class TenantQueueDashboardRoutes {
  constructor(
    @Inject(TENANT_QUEUE_DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    private readonly inspector: TenantQueueInspector,
    private readonly deadLetters: DeadLetters,
    @Optional() private readonly scheduler?: TenantScheduler,
    @Optional() @Inject(TenantQueueControls) private readonly controls?: TenantQueueControls,
  ) {}

  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  @Header(
    'content-security-policy',
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; " +
      "frame-ancestors 'none'",
  )
  page(): string {
    return renderDashboardPage({ ...this.options, controls: this.controls !== undefined });
  }

  @Get('api/tenants')
  async tenants(@Query('queue') queue?: string) {
    return guarded(async () => ({
      queues: this.inspector.queueNames(),
      controls: this.controls !== undefined,
      tenants: await this.inspector.listTenants({
        queue: queue || undefined,
        limit: this.options.limit,
      }),
    }));
  }

  @Get('api/tenants/:tenantId')
  async tenant(@Param('tenantId') tenantId: string) {
    return guarded(async () => {
      const queues = await Promise.all(
        this.inspector.queueNames().map((queue) => this.inspector.getTenant(queue, tenantId)),
      );
      const deadLetters = await this.deadLetters.list(tenantId, { limit: 10 });
      const schedules = this.scheduler ? await this.scheduler.list(tenantId) : [];
      return {
        tenantId,
        queues,
        deadLetters: {
          total: deadLetters.total,
          items: deadLetters.items.map((letter) => ({
            jobId: letter.jobId,
            queue: letter.queue,
            name: letter.name,
            reason: letter.reason,
            failedReason: letter.failedReason,
            attempts: letter.attempts,
            failedAt: letter.failedAt,
          })),
        },
        schedules: schedules.map((schedule) => ({
          key: schedule.key,
          cron: schedule.cron,
          timezone: schedule.timezone,
          enabled: schedule.enabled,
          queue: schedule.job.queue,
          job: schedule.job.name,
          nextRunAt: schedule.nextRunAt,
        })),
      };
    });
  }

  @Post('api/queues/:queue/tenants/:tenantId/pause')
  @HttpCode(200)
  pause(@Param('queue') queue: string, @Param('tenantId') tenantId: string, @Req() req: unknown) {
    return this.act('pause', queue, tenantId, req);
  }

  @Post('api/queues/:queue/tenants/:tenantId/resume')
  @HttpCode(200)
  resume(@Param('queue') queue: string, @Param('tenantId') tenantId: string, @Req() req: unknown) {
    return this.act('resume', queue, tenantId, req);
  }

  private async act(action: 'pause' | 'resume', queue: string, tenantId: string, req: unknown) {
    const headers = (req as { headers?: Record<string, unknown> })?.headers ?? {};
    if (headers[DASHBOARD_ACTION_HEADER] !== '1') {
      throw new ForbiddenException(`dashboard actions need the ${DASHBOARD_ACTION_HEADER} header`);
    }
    if (!this.controls) {
      throw new NotImplementedException('no TenantQueueControls provider: pause/resume is off');
    }
    return guarded(async () => {
      await this.inspector.getTenant(queue, tenantId);
      await this.controls![action](queue, tenantId);
      return { queue, tenantId, action };
    });
  }
}

/** Maps the module's typed errors to HTTP statuses (unknown queue 404, bad input 400). */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof UnknownTenantQueueError) throw new NotFoundException(error.message);
    if (error instanceof TenantQueueError) throw new BadRequestException(error.message);
    throw error;
  }
}

/** A controller class serving the routes at `path`, behind `guard` when one is given. */
export function createDashboardController(path: string, guard?: Type<CanActivate>): Type {
  class TenantQueueDashboardController extends TenantQueueDashboardRoutes {}
  Controller(path)(TenantQueueDashboardController);
  if (guard) UseGuards(guard)(TenantQueueDashboardController);
  return TenantQueueDashboardController;
}
