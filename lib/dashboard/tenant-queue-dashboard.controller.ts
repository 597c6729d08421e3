import {
  BadRequestException,
  Body,
  CanActivate,
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
  ServiceUnavailableException,
  Type,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { TenantEnvelopeCodec } from '../core/envelope/tenant-envelope.codec';
import { DeadLetters, DeadLetterNotFoundError } from '../dead-letters';
import { TenantPortUnavailableError, TenantStatusService } from '../guards';
import { TenantQueueError, UnknownTenantQueueError } from '../core/errors';
import { TenantQueueInspector, TenantQueueControls, TenantQueueStateSource } from '../metrics';
import { TenantCronExplorer, TenantScheduler } from '../scheduler';
import { Messages } from '../tenant-queue.messages';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { TenantTiers } from '../core/tenants/tenant-tiers.service';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core/options/core.options';
import { DashboardActions } from './dashboard-actions';
import { DashboardDeadlineInterceptor } from './dashboard-deadline.interceptor';
import { tenantDetail } from './dashboard-data';
import { JOB_STATES, DashboardJobState, listTenantJobs, readJob } from './dashboard-jobs';
import { renderDashboardPage } from './dashboard-page';
import {
  DASHBOARD_ACTION_HEADER,
  ResolvedDashboardOptions,
  TENANT_QUEUE_DASHBOARD_OPTIONS,
} from './dashboard-options.interface';

/** Routes of the dashboard; `createDashboardController` mounts them at the configured path. */
export class TenantQueueDashboardRoutes {
  private readonly actions: DashboardActions;

  constructor(
    @Inject(TENANT_QUEUE_DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    private readonly inspector: TenantQueueInspector,
    private readonly deadLetters: DeadLetters,
    private readonly registry: TenantQueueRegistry,
    private readonly tiers: TenantTiers,
    status: TenantStatusService,
    private readonly codec: TenantEnvelopeCodec,
    @Inject(TENANT_QUEUE_OPTIONS) core: ResolvedTenantQueueOptions,
    @Optional() private readonly scheduler?: TenantScheduler,
    @Optional() @Inject(TenantQueueControls) private readonly controls?: TenantQueueControls,
    @Optional()
    @Inject(TenantQueueStateSource)
    private readonly stateSource?: TenantQueueStateSource,
    @Optional() private readonly crons?: TenantCronExplorer,
  ) {
    this.actions = new DashboardActions(
      inspector,
      deadLetters,
      registry,
      controls,
      stateSource,
      tiers,
      status,
      // Half the bound every route answers within (DashboardDeadlineInterceptor).
      Math.floor(core.enqueueTimeoutMs / 2),
    );
  }

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
      queueSummaries: await this.inspector.listQueues(),
      internalQueues: this.crons?.internalQueues() ?? [],
      limit: this.options.limit,
      controls: this.controls !== undefined,
      tenants: await this.inspector.listTenants({
        queue: queue || undefined,
        limit: this.options.limit,
      }),
    }));
  }

  @Get('api/tenants/:tenantId')
  async tenant(@Param('tenantId') tenantId: string) {
    return guarded(() =>
      tenantDetail(
        this.inspector,
        this.deadLetters,
        this.scheduler,
        this.controls,
        this.crons,
        this.tiers,
        tenantId,
      ),
    );
  }

  @Get('api/queues/:queue/tenants/:tenantId/history')
  history(@Param('queue') queue: string, @Param('tenantId') tenantId: string) {
    return guarded(() => this.inspector.history(queue, tenantId));
  }

  @Get('api/queues/:queue/tenants/:tenantId/jobs')
  jobs(
    @Param('queue') queue: string,
    @Param('tenantId') tenantId: string,
    @Query('state') state = 'gate',
  ) {
    return guarded(async () => {
      this.codec.assertTenantId(tenantId);
      if (!(JOB_STATES as readonly string[]).includes(state)) {
        throw new BadRequestException(Messages.dashboardJobState(state, JOB_STATES));
      }
      return listTenantJobs(
        this.inspector,
        this.registry,
        this.deadLetters,
        this.stateSource,
        queue,
        tenantId,
        state as DashboardJobState,
      );
    });
  }

  /**
   * A job id searched in every queue, for operators of every tenant: the route names no tenant,
   * so a per-tenant guard refuses it (its operators search with the route below).
   */
  @Get('api/jobs/:jobId')
  findJob(@Param('jobId') jobId: string) {
    return guarded(() => this.search(jobId));
  }

  /** The same search, answering only where the job is this tenant's. */
  @Get('api/tenants/:tenantId/jobs/:jobId')
  findTenantJob(@Param('tenantId') tenantId: string, @Param('jobId') jobId: string) {
    return guarded(() => {
      this.codec.assertTenantId(tenantId);
      return this.search(jobId, tenantId);
    });
  }

  /** Why a job of this tenant waits; another tenant's job (or none) answers 404 alike. */
  @Get('api/queues/:queue/tenants/:tenantId/jobs/:jobId/explain')
  explain(
    @Param('queue') queue: string,
    @Param('tenantId') tenantId: string,
    @Param('jobId') jobId: string,
  ) {
    return guarded(async () => {
      this.codec.assertTenantId(tenantId);
      const explanation = await this.inspector.explain(queue, jobId);
      if (explanation.tenantId !== tenantId) {
        throw new NotFoundException(Messages.dashboardNoSuchJob(queue, tenantId, jobId));
      }
      return explanation;
    });
  }

  @Post('api/queues/:queue/tenants/:tenantId/pause')
  @HttpCode(200)
  pause(@Param('queue') queue: string, @Param('tenantId') tenantId: string, @Req() req: unknown) {
    return this.act(req, () => this.actions.pauseOrResume('pause', queue, tenantId));
  }

  @Post('api/queues/:queue/tenants/:tenantId/resume')
  @HttpCode(200)
  resume(@Param('queue') queue: string, @Param('tenantId') tenantId: string, @Req() req: unknown) {
    return this.act(req, () => this.actions.pauseOrResume('resume', queue, tenantId));
  }

  @Post('api/queues/:queue/tenants/:tenantId/settings')
  @HttpCode(200)
  settings(
    @Param('queue') queue: string,
    @Param('tenantId') tenantId: string,
    @Body() body: unknown,
    @Req() req: unknown,
  ) {
    return this.act(req, () => this.actions.configure(queue, tenantId, body));
  }

  @Post('api/queues/:queue/tenants/:tenantId/dead-letters/:jobId/replay')
  @HttpCode(200)
  replay(
    @Param('queue') queue: string,
    @Param('tenantId') tenantId: string,
    @Param('jobId') jobId: string,
    @Req() req: unknown,
  ) {
    return this.act(req, () => this.actions.replay(queue, tenantId, jobId));
  }

  @Post('api/queues/:queue/tenants/:tenantId/dead-letters/purge')
  @HttpCode(200)
  purge(
    @Param('queue') queue: string,
    @Param('tenantId') tenantId: string,
    @Query() query: Record<string, unknown>,
    @Req() req: unknown,
  ) {
    // Only a request without any query purges them all: an empty or repeated `jobId` (a form's
    // blank field), or one misspelled or bracketed (`jobID`, `jobId[]`), is refused, never read
    // as "all".
    const other = Object.keys(query ?? {}).find((key) => key !== 'jobId');
    if (other !== undefined) throw new BadRequestException(Messages.dashboardPurgeQuery(other));
    const jobId = query?.jobId;
    if (jobId !== undefined && (typeof jobId !== 'string' || jobId === '')) {
      throw new BadRequestException(Messages.deadLetterPurgeId(jobId));
    }
    return this.act(req, () => this.actions.purge(queue, tenantId, jobId));
  }

  @Post('api/tenants/:tenantId/tier')
  @HttpCode(200)
  setTier(@Param('tenantId') tenantId: string, @Body() body: unknown, @Req() req: unknown) {
    return this.act(
      req,
      async () => {
        this.codec.assertTenantId(tenantId);
        return this.actions.setTier(tenantId, body);
      },
      false,
    );
  }

  @Post('api/queues/:queue/tenants/:tenantId/jobs/:jobId/retry')
  @HttpCode(200)
  retry(
    @Param('queue') queue: string,
    @Param('tenantId') tenantId: string,
    @Param('jobId') jobId: string,
    @Req() req: unknown,
  ) {
    return this.act(req, async () => {
      // 400 for a tenant id the pattern refuses, as on every route naming one (not 404).
      this.codec.assertTenantId(tenantId);
      return this.actions.retry(queue, tenantId, jobId);
    });
  }

  /** Each queue that knows the job, with where it stands (only the tenant's when one is named). */
  private async search(jobId: string, tenantId?: string) {
    const found = [];
    for (const queue of this.inspector.queueNames()) {
      const explanation = await this.inspector.explain(queue, jobId);
      if (explanation.state === 'unknown') continue;
      if (tenantId !== undefined && explanation.tenantId !== tenantId) continue;
      found.push({
        explanation,
        job: (await readJob(this.inspector, this.registry, queue, jobId)) ?? null,
      });
    }
    return { jobId, tenantId: tenantId ?? null, found };
  }

  /** Every action: the dashboard's header (a cross-site form cannot set it), then the work. */
  private act<T>(req: unknown, fn: () => Promise<T>, needsControls = true): Promise<T> {
    const headers = (req as { headers?: Record<string, unknown> })?.headers ?? {};
    if (headers[DASHBOARD_ACTION_HEADER] !== '1') {
      throw new ForbiddenException(
        `dashboard actions need the header "${DASHBOARD_ACTION_HEADER}: 1" (the dashboard's page sends it; a cross-site form cannot)`,
      );
    }
    if (needsControls && !this.controls) {
      throw new NotImplementedException(
        'no TenantQueueControls provider: the dashboard actions are off',
      );
    }
    return guarded(fn);
  }
}

/**
 * Maps the module's typed errors to HTTP statuses (unknown queue or record 404, a directory
 * outage 503, bad input 400).
 */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof UnknownTenantQueueError || error instanceof DeadLetterNotFoundError) {
      throw new NotFoundException(error.message);
    }
    // The directory is down or silent: try again later, as the module's exception filter says.
    if (error instanceof TenantPortUnavailableError) {
      throw new ServiceUnavailableException(error.message);
    }
    if (error instanceof TenantQueueError) throw new BadRequestException(error.message);
    throw error;
  }
}

/** A controller class serving the routes at `path`, behind `guard` when one is given. */
export function createDashboardController(path: string, guard?: Type<CanActivate>): Type {
  class TenantQueueDashboardController extends TenantQueueDashboardRoutes {}
  Controller(path)(TenantQueueDashboardController);
  UseInterceptors(DashboardDeadlineInterceptor)(TenantQueueDashboardController);
  if (guard) UseGuards(guard)(TenantQueueDashboardController);
  return TenantQueueDashboardController;
}
