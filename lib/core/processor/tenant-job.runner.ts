import { ForbiddenException, Injectable, Logger, Type } from '@nestjs/common';
import { GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA } from '@nestjs/common/constants';
import { ContextId, ContextIdFactory, ExternalContextCreator, ModuleRef } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { Job, Processor, UnrecoverableError, Worker } from 'bullmq';
import { ClsService } from 'nestjs-cls';
import { JobTenantState, TENANT_STATE } from '../context/tenant-state';
import { TenantEnvelopeCodec } from '../envelope/tenant-envelope.codec';
import {
  CancelReason,
  JobCancelledError,
  NonErrorThrownError,
  NonRetryableError,
  formatCancelledReason,
} from '../errors';
import { TenantQueueDefinition } from '../types/queue-definition.interface';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { TenantJob } from '../types/tenant-job.interface';
import { ENVELOPE_KEY, TENANT_JOB_CONTEXT_TYPE } from '../../tenant-queue.constants';
import { Messages } from '../../tenant-queue.messages';
import { TenantJobPipeline } from './tenant-job-pipeline';
import { TenantProcessorOptions } from './tenant-processor.decorator';
import { TenantWorkerHost } from './tenant-worker-host';
import { createLocalContextCreator } from './job-context-creator';
import { Inject } from '@nestjs/common';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../options/core.options';
import { jobLogRef, tenantLogFields } from '../context/tenant-log-fields';
import { endJobScope, runDisposers } from '../scope/job-scope';
import { TenantJobRequest } from '../scope/tenant-job-request';
import { JobHandler as Handler, JobRun, ProcessorLane } from './job-run';
import { JobRunOptions, RUN_OPTIONS_KEY, runOptionsProblem } from '../envelope/job-run-options';
import { attachRun } from './tenant-bull-job';

type MutableJob = Job & { tenant?: TenantEnvelope };

const hasOwn = Object.prototype.hasOwnProperty;
const NO_RUN_OPTIONS: JobRunOptions = Object.freeze({});

/**
 * Runs each job of a `@TenantProcessor` in a fresh CLS context: open and check the envelope,
 * restore the tenant, hand the job (payload without `_tenant`) to the handler through Nest's
 * guards and interceptors, then clear the tenant even when the handler throws.
 */
@Injectable()
export class TenantJobRunner {
  private readonly logger = new Logger('TenantQueue');
  private readonly contextCreator: ExternalContextCreator;
  private readonly globalEnhancers: boolean;
  /** Processors whose dependency tree is request-scoped: resolved per job, not called directly. */
  private readonly scopedHosts = new WeakMap<TenantWorkerHost, InstanceWrapper>();
  /** The scoped instance that ran a job, for that job's worker events. */
  private readonly scopedRuns = new WeakMap<Job, TenantWorkerHost>();
  /** Durable processors by the tenant ContextId Nest keeps them under (saves a resolve per job). */
  private readonly durableHosts = new WeakMap<ContextId, TenantWorkerHost>();

  constructor(
    private readonly cls: ClsService,
    private readonly codec: TenantEnvelopeCodec,
    private readonly pipeline: TenantJobPipeline,
    externalContextCreator: ExternalContextCreator,
    @Inject(TENANT_QUEUE_OPTIONS) options: ResolvedTenantQueueOptions,
    private readonly moduleRef: ModuleRef,
  ) {
    this.globalEnhancers = options.globalEnhancers;
    this.contextCreator = options.globalEnhancers
      ? externalContextCreator
      : createLocalContextCreator(externalContextCreator);
  }

  createProcessor(
    host: TenantWorkerHost,
    definition: TenantQueueDefinition,
    processorOptions: TenantProcessorOptions,
  ): Processor {
    const scoped = this.scopedHosts.get(host);
    const handler = scoped ? this.scopedHandlerFor(host, scoped) : this.handlerFor(host);
    const lane = new ProcessorLane(definition, host, processorOptions, handler, this.pipeline);
    // BullMQ reads the processor's arity: 3 parameters cost an AbortController per job.
    if (lane.wantsSignal) {
      return (job, token, signal) =>
        this.openScope(() => this.execute(new JobRun(lane, job, token, signal)));
    }
    return (job, token) =>
      this.openScope(() => this.execute(new JobRun(lane, job, token, undefined)));
  }

  /** The one place a job's (or a worker event's) fresh CLS scope is opened. */
  private openScope<T>(fn: () => T): T {
    return this.cls.run({ ifNested: 'override' }, fn);
  }

  /**
   * The handler call. Through Nest's context creator when guards, interceptors or pipes apply to
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
    return (
      this.globalEnhancers ||
      [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA].some(declares)
    );
  }

  /** @internal Called by the explorer for a processor whose dependency tree is request-scoped. */
  useScopedHost(host: TenantWorkerHost, wrapper: InstanceWrapper): void {
    this.scopedHosts.set(host, wrapper);
  }

  /** Per job: resolve the processor in the job's DI context, then call it like a singleton. */
  private scopedHandlerFor(host: TenantWorkerHost, wrapper: InstanceWrapper): Handler {
    const enhanced = this.isEnhanced(host);
    return async (job, token, signal) => {
      const { instance, contextId } = await this.resolveScoped(host, wrapper, job);
      this.scopedRuns.set(job, instance);
      if (!enhanced) return instance.process(job, token, signal);
      return this.handlerFor(instance, contextId, wrapper.id)(job, token, signal);
    };
  }

  /**
   * The instance of a processor for `job`: the singleton itself, the scoped instance that ran
   * the job, or one Nest resolves in the job's context (the app's `ContextIdStrategy` applies;
   * `REQUEST` is a `TenantJobRequest`).
   */
  hostFor(
    host: TenantWorkerHost,
    job: Job | undefined,
  ): TenantWorkerHost | Promise<TenantWorkerHost> {
    const wrapper = this.scopedHosts.get(host);
    if (!wrapper) return host;
    const ran = job && this.scopedRuns.get(job);
    if (ran) return ran;
    return this.resolveScoped(host, wrapper, job).then(({ instance }) => instance);
  }

  private async resolveScoped(host: TenantWorkerHost, wrapper: InstanceWrapper, job?: Job) {
    const tenantId = job ? this.envelopeOf(job as MutableJob)?.tenantId : undefined;
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

  /** Runs `listener` in the tenant context of `job` (for worker events). */
  runInJobContext(job: Job | undefined, listener: () => void): void {
    return this.openScope(() => {
      const envelope = job ? this.envelopeOf(job as MutableJob) : undefined;
      if (envelope) {
        const state = new JobTenantState(undefined);
        state.fill(envelope);
        this.cls.set(TENANT_STATE, state);
      }
      return this.pipeline.aroundWorkerEvent(job, listener);
    });
  }

  /**
   * One attempt: open the job, run the stages and the handler, then release the job's scope.
   * Written with `then` rather than `async`/`await`: under AsyncLocalStorage every `await` costs
   * an extra promise and its hooks, per job.
   */
  private execute(run: JobRun): Promise<unknown> {
    // The one CLS write of the attempt: its tenant (filled once the envelope is open) and its scope.
    this.cls.set(TENANT_STATE, run.state);
    let running: Promise<unknown>;
    try {
      running = run.start(this.open(run));
    } catch (error) {
      return this.failed(run, error);
    }
    return running.then(
      (result) => this.settled(run, result),
      (error: unknown) => this.failed(run, error),
    );
  }

  private settled(run: JobRun, result: unknown): unknown {
    const disposers = endJobScope(run);
    if (!disposers) {
      run.state.clear();
      return result;
    }
    return runDisposers(disposers, run, this.logger).then(() => {
      run.state.clear();
      return result;
    });
  }

  /** After a throw or a timeout; the disposers never replace the job's own error. */
  private async failed(run: JobRun, error: unknown): Promise<never> {
    try {
      const disposers = endJobScope(run);
      if (disposers) await runDisposers(disposers, run, this.logger);
    } finally {
      run.state.clear();
    }
    throw this.toBullError(error, run.job);
  }

  /**
   * Validates the envelope and the run options, then detaches both: `job.data` becomes the
   * payload, `job.tenant` the envelope, `job.runId` the run id. Returns whether the job carries a
   * deadline of its own.
   */
  private open(run: JobRun): boolean {
    const { job, definition } = run;
    const data = job.data as Record<string, unknown> | null | undefined;
    const object = data !== null && typeof data === 'object';
    const raw = object ? data[ENVELOPE_KEY] : undefined;
    let envelope: TenantEnvelope | undefined;
    if (raw === undefined) {
      if (definition.tenantScoped && !definition.systemJobs.has(job.name)) {
        throw new JobCancelledError(
          'MISSING_TENANT',
          Messages.missingEnvelope(definition.name, job.name),
        );
      }
    } else {
      try {
        envelope = this.codec.open(raw);
      } catch (error) {
        throw new JobCancelledError('INVALID_ENVELOPE', (error as Error).message);
      }
    }
    const rawRun = object && hasOwn.call(data, RUN_OPTIONS_KEY) ? data[RUN_OPTIONS_KEY] : undefined;
    const problem = rawRun === undefined ? undefined : runOptionsProblem(rawRun);
    const options = rawRun === undefined || problem ? NO_RUN_OPTIONS : (rawRun as JobRunOptions);
    // In place: the envelope (then `_run`) is the payload's last key, and deleting the last key
    // keeps the object's fast shape; a copy would cost more.
    if (raw !== undefined) delete data![ENVELOPE_KEY];
    if (rawRun !== undefined) delete data![RUN_OPTIONS_KEY];
    attachRun(job, envelope, options, raw, rawRun);
    if (envelope) {
      run.envelope = envelope;
      run.state.fill(envelope);
    }
    // Refused once detached, so the job's events see it opened, like any other failed job.
    if (problem) throw new NonRetryableError(Messages.invalidRunOptions(problem));
    return options.timeoutMs !== undefined;
  }

  /** The envelope of a job: already opened by the runner, or read from its data. */
  private envelopeOf(job: MutableJob): TenantEnvelope | undefined {
    if (job.tenant) return job.tenant;
    const raw = (job.data as Record<string, unknown> | undefined)?.[ENVELOPE_KEY];
    if (raw === undefined) return undefined;
    try {
      return this.codec.open(raw);
    } catch {
      return undefined;
    }
  }

  private toBullError(error: unknown, job: Job): unknown {
    if (error instanceof JobCancelledError) return this.cancelled(error.reason, error.message, job);
    // What ExternalContextCreator throws when a Nest guard on the processor returns false.
    if (error instanceof ForbiddenException) {
      return this.cancelled('FORBIDDEN', Messages.jobForbidden(error.message), job);
    }
    if (error instanceof NonRetryableError) {
      const unrecoverable = new UnrecoverableError(error.message);
      unrecoverable.stack = error.stack;
      (unrecoverable as { cause?: unknown }).cause = error;
      return unrecoverable;
    }
    if (!(error instanceof Error)) {
      return new NonErrorThrownError(error, Messages.nonErrorThrown(describeThrown(error)));
    }
    return error;
  }

  private cancelled(reason: CancelReason, message: string, job: Job): UnrecoverableError {
    this.logger.warn(
      `${tenantLogFields(jobLogRef(job))} job ${job.id} (${job.queueName}/${job.name}) cancelled: ${reason}`,
    );
    const error = new UnrecoverableError(formatCancelledReason(reason, message));
    (error as { cause?: unknown }).cause = reason;
    return error;
  }
}

function describeThrown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 200));
  if (value === null || value === undefined) return String(value);
  try {
    return `${typeof value} ${JSON.stringify(value)?.slice(0, 200)}`;
  } catch {
    return typeof value;
  }
}
