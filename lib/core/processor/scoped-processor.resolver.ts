import { Inject, Injectable, Type } from '@nestjs/common';
import { GUARDS_METADATA, INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { ContextId, ContextIdFactory, ExternalContextCreator, ModuleRef } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { Job, Worker } from 'bullmq';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../options/core.options';
import { TenantJobRequest } from '../scope/tenant-job-request';
import { TenantJob } from '../types/tenant-job.interface';
import { TENANT_JOB_CONTEXT_TYPE } from '../../tenant-queue.constants';
import { createJobContextCreator } from './job-context-creator';
import { JobHandler as Handler } from './job-run';
import { TenantWorkerHost } from './tenant-worker-host';

/**
 * How a processor's `process` is called for a job: directly, or through Nest's guards and
 * interceptors when any apply; and, for a processor whose dependency tree is
 * request-scoped or durable, on the instance Nest resolves in the job's DI context (`REQUEST` is
 * a `TenantJobRequest`; the app's `ContextIdStrategy` applies).
 */
@Injectable()
export class ScopedProcessorResolver {
  private readonly contextCreator: ExternalContextCreator;
  private readonly globalEnhancers: boolean;
  /** Processors whose dependency tree is request-scoped: resolved per job, not called directly. */
  private readonly scopedHosts = new WeakMap<TenantWorkerHost, InstanceWrapper>();
  /** The scoped instance that ran a job, for that job's worker events. */
  private readonly scopedRuns = new WeakMap<Job, TenantWorkerHost>();
  /** Durable processors by the tenant ContextId Nest keeps them under (saves a resolve per job). */
  private readonly durableHosts = new WeakMap<ContextId, TenantWorkerHost>();

  constructor(
    externalContextCreator: ExternalContextCreator,
    @Inject(TENANT_QUEUE_OPTIONS) options: ResolvedTenantQueueOptions,
    private readonly moduleRef: ModuleRef,
  ) {
    this.globalEnhancers = options.globalEnhancers;
    this.contextCreator = createJobContextCreator(externalContextCreator, options.globalEnhancers);
  }

  /** @internal Called by the explorer for a processor whose dependency tree is request-scoped. */
  useScopedHost(host: TenantWorkerHost, wrapper: InstanceWrapper): void {
    this.scopedHosts.set(host, wrapper);
  }

  /** The handler of `host`'s jobs, built once per processor. `tenantOf` reads a job's tenant. */
  handlerOf(host: TenantWorkerHost, tenantOf: (job: Job) => string | undefined): Handler {
    const scoped = this.scopedHosts.get(host);
    return scoped ? this.scopedHandlerFor(host, scoped, tenantOf) : this.handlerFor(host);
  }

  /**
   * The instance of a processor for `job`: the singleton itself, the scoped instance that ran
   * the job, or one Nest resolves in the job's context.
   */
  hostFor(
    host: TenantWorkerHost,
    job: Job | undefined,
    tenantOf: (job: Job) => string | undefined,
  ): TenantWorkerHost | Promise<TenantWorkerHost> {
    const wrapper = this.scopedHosts.get(host);
    if (!wrapper) return host;
    const ran = job && this.scopedRuns.get(job);
    if (ran) return ran;
    const tenantId = job ? tenantOf(job) : undefined;
    return this.resolveScoped(host, wrapper, job, tenantId).then(({ instance }) => instance);
  }

  /**
   * The handler call. Through Nest's context creator when guards or interceptors apply to
   * the processor (its own, or the app's global ones with `globalEnhancers`); otherwise a direct
   * call, which saves several async frames per job (each costs extra with AsyncLocalStorage on).
   */
  private handlerFor(host: TenantWorkerHost, contextId?: ContextId, inquirerId?: string): Handler {
    if (!this.isEnhanced(host)) return (job, token, signal) => host.process(job, token, signal);
    return this.contextCreator.create(
      host,
      host.process as (...args: unknown[]) => unknown,
      'process',
      undefined,
      undefined,
      contextId,
      inquirerId,
      { guards: true, interceptors: true, filters: false },
      TENANT_JOB_CONTEXT_TYPE,
    ) as Handler;
  }

  private isEnhanced(host: TenantWorkerHost): boolean {
    const declares = (key: string) =>
      [host.constructor, host.process].some(
        (target) => (Reflect.getMetadata(key, target) as unknown[] | undefined)?.length,
      );
    // Pipes are left out: they bind to decorated parameters, and process(job) has none.
    return this.globalEnhancers || [GUARDS_METADATA, INTERCEPTORS_METADATA].some(declares);
  }

  /** Per job: resolve the processor in the job's DI context, then call it like a singleton. */
  private scopedHandlerFor(
    host: TenantWorkerHost,
    wrapper: InstanceWrapper,
    tenantOf: (job: Job) => string | undefined,
  ): Handler {
    const enhanced = this.isEnhanced(host);
    return async (job, token, signal) => {
      const { instance, contextId } = await this.resolveScoped(host, wrapper, job, tenantOf(job));
      this.scopedRuns.set(job, instance);
      if (!enhanced) return instance.process(job, token, signal);
      return this.handlerFor(instance, contextId, wrapper.id)(job, token, signal);
    };
  }

  private async resolveScoped(
    host: TenantWorkerHost,
    wrapper: InstanceWrapper,
    job: Job | undefined,
    tenantId: string | undefined,
  ) {
    const request = new TenantJobRequest(tenantId, job as TenantJob);
    const contextId = ContextIdFactory.getByRequest(request);
    this.moduleRef.registerRequestByContextId(request, contextId);
    const tree = wrapper.isDependencyTreeDurable()
      ? contextId.getParent?.({ token: wrapper.token, isTreeDurable: true })
      : undefined;
    const shared = tree !== undefined && tree !== contextId;
    const cached = shared ? this.durableHosts.get(tree) : undefined;
    if (cached) return { instance: cached, contextId };
    const instance = await this.moduleRef.resolve<TenantWorkerHost>(
      wrapper.metatype as Type<TenantWorkerHost>,
      contextId,
      { strict: false },
    );
    if (shared) this.durableHosts.set(tree, instance);
    // The worker was attached to the host the explorer found; share it with this instance.
    const worker = (host as unknown as { tenantWorker?: Worker }).tenantWorker;
    if (worker && instance !== host) instance.attachWorker(worker);
    return { instance, contextId };
  }
}
