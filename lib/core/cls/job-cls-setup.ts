import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, ModuleRef } from '@nestjs/core';
import type { Job } from 'bullmq';
import {
  CLS_ID,
  ClsModuleOptions,
  ClsPluginHooks,
  ClsService,
  isPluginHooksToken,
} from 'nestjs-cls';
import { ProxyProviderManager } from 'nestjs-cls/dist/src/lib/proxy-provider/proxy-provider-manager';
import { TENANT_STATE, TenantState } from '../context/tenant-state';
import { jobLogRef, tenantLogFields } from '../context/tenant-log-fields';
import { TenantQueueLogger } from '../logging/tenant-queue-logger';
import { TenantJob } from '../types/tenant-job.interface';
import {
  JobRunContext,
  JobStage,
  TenantJobPipeline,
  WorkerEventSetup,
} from '../processor/tenant-job-pipeline';
import { TenantJobStage } from '../processor/tenant-job-stage.decorator';
import { Messages } from '../../tenant-queue.messages';
import { ResolvedJobClsOptions } from './job-cls.options';
import { TenantJobClsInitContext } from './tenant-job-cls-init-context';

type Hook = NonNullable<ClsPluginHooks['beforeSetup']>;

export const TENANT_JOB_CLS_OPTIONS = Symbol('TENANT_JOB_CLS_OPTIONS');
/** What `ClsModule.forRoot` stores its options under (nestjs-cls 6). */
const CLS_MODULE_OPTIONS = 'ClsModuleOptions';

/**
 * @internal Does for each job (as a stage, once the tenant is restored) and each worker event
 * what `@UseCls()` does for a method: plugin `beforeSetup` hooks, `CLS_ID`, the `cls.setup`
 * option, plugin `afterSetup` hooks, proxy providers resolved. Decided once at bootstrap: with
 * nothing to do, no stage is added and worker events call their listener directly.
 */
@Injectable()
@TenantJobStage('identity', 10)
export class JobClsSetup implements JobStage, WorkerEventSetup, OnModuleInit {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  private before: Hook[] = [];
  private after: Hook[] = [];
  private generateId = false;
  private resolveProxies = false;
  private active = false;

  constructor(
    private readonly cls: ClsService,
    private readonly pipeline: TenantJobPipeline,
    private readonly discovery: DiscoveryService,
    private readonly moduleRef: ModuleRef,
    @Inject(TENANT_JOB_CLS_OPTIONS) private readonly options: ResolvedJobClsOptions,
  ) {}

  onModuleInit(): void {
    const appOptions = this.appClsOptions();
    if (this.options.initializePlugins) this.collectPluginHooks();
    // Proxy providers are resolved by the resolver ClsModule.forRoot sets up.
    this.resolveProxies =
      this.options.resolveProxyProviders && appOptions !== undefined && hasProxyProviders();
    const work =
      this.before.length + this.after.length > 0 ||
      this.options.setup !== undefined ||
      this.resolveProxies;
    this.generateId = this.options.generateId ?? (work || appGeneratesIds(appOptions));
    this.active = work || this.generateId;
    if (this.active) this.pipeline.useWorkerEventSetup(this);
  }

  /** Only when something runs per job (decided at init). */
  appliesTo(): boolean {
    return this.active;
  }

  /** The job stage (only registered when something runs per job). */
  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown> {
    return this.prepare(context.job).then(next);
  }

  /**
   * For a worker event, inside its CLS context once the tenant is set: the setup, then
   * `listener`. A setup that throws is logged and the listener skipped (it would run without
   * what the setup provides).
   */
  around(job: Job | undefined, listener: () => void): void {
    if (!this.active || !job) return listener();
    this.prepare(job as TenantJob).then(listener, (error: Error) =>
      this.logger.error(
        `${tenantLogFields(jobLogRef(job))} ${Messages.jobClsSetupFailed(job.queueName, error?.message)}`,
      ),
    );
  }

  private async prepare(job: TenantJob): Promise<void> {
    const cls = this.cls;
    const context = this.before.length + this.after.length > 0 && new TenantJobClsInitContext(job);
    for (const hook of this.before) await hook(cls, context as TenantJobClsInitContext);
    if (this.generateId) cls.set(CLS_ID, this.idFor(job));
    if (this.options.setup) await this.options.setup(cls, job);
    for (const hook of this.after) await hook(cls, context as TenantJobClsInitContext);
    if (this.resolveProxies) await cls.proxy.resolve();
  }

  private idFor(job: TenantJob): string {
    if (this.options.idGenerator) return this.options.idGenerator(job);
    const state = this.cls.get(TENANT_STATE) as TenantState | undefined;
    return state?.correlationId ?? String(job.id);
  }

  /** The same hooks nestjs-cls's `ClsPluginsHooksHost` gathers, found in this app's container. */
  private collectPluginHooks(): void {
    for (const wrapper of this.discovery.getProviders()) {
      if (!isPluginHooksToken(wrapper.name as string)) continue;
      const hooks = wrapper.instance as ClsPluginHooks | undefined;
      if (hooks?.beforeSetup) this.before.push(hooks.beforeSetup);
      if (hooks?.afterSetup) this.after.push(hooks.afterSetup);
    }
  }

  private appClsOptions(): ClsModuleOptions | undefined {
    try {
      return this.moduleRef.get<ClsModuleOptions>(CLS_MODULE_OPTIONS, { strict: false });
    } catch {
      return undefined; // the app did not call ClsModule.forRoot
    }
  }
}

function appGeneratesIds(options: ClsModuleOptions | undefined): boolean {
  return Boolean(
    options?.middleware?.generateId ||
    options?.guard?.generateId ||
    options?.interceptor?.generateId,
  );
}

/** nestjs-cls keeps its registered proxy providers in a static map; unknown shape: assume some. */
function hasProxyProviders(): boolean {
  const map = (ProxyProviderManager as unknown as { proxyProviderMap?: unknown }).proxyProviderMap;
  return map instanceof Map ? map.size > 0 : true;
}
