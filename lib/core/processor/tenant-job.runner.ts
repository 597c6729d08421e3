import { Injectable } from '@nestjs/common';
import { Job, Processor } from 'bullmq';
import { ClsService } from 'nestjs-cls';
import { JobTenantState, TENANT_STATE } from '../context/tenant-state';
import { TenantEnvelopeCodec } from '../envelope/tenant-envelope.codec';
import { JobCancelledError, NonRetryableError } from '../errors';
import { TenantQueueDefinition } from '../types/queue-definition.interface';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { ENVELOPE_KEY } from '../../tenant-queue.constants';
import { Messages } from '../../tenant-queue.messages';
import { TenantJobPipeline } from './tenant-job-pipeline';
import { TenantProcessorOptions } from './tenant-processor.decorator';
import { TenantWorkerHost } from './tenant-worker-host';
import { toBullError } from './job-error.mapper';
import { ScopedProcessorResolver } from './scoped-processor.resolver';
import { endJobScope, runDisposers } from '../scope/job-scope';
import { JobRun, ProcessorLane } from './job-run';
import { JobRunOptions, RUN_OPTIONS_KEY, runOptionsProblem } from '../envelope/job-run-options';
import { TenantBullJob, attachRun } from './tenant-bull-job';
import { tenantLogFields } from '../context/tenant-log-fields';
import { TenantQueueLogger } from '../logging/tenant-queue-logger';

const hasOwn = Object.prototype.hasOwnProperty;
const NO_RUN_OPTIONS: JobRunOptions = Object.freeze({});

/**
 * Runs each job of a `@TenantProcessor` in a fresh CLS context: open and check the envelope,
 * restore the tenant, hand the job (payload without `_tenant`) to its handler (see
 * `ScopedProcessorResolver`), then release the job's scope and clear the tenant even when the
 * handler throws (errors mapped for BullMQ by `toBullError`).
 */
@Injectable()
export class TenantJobRunner {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  /** A job's tenant for DI resolution (built once; no closure per job). */
  private readonly tenantOf = (job: Job) => this.codec.envelopeOf(job)?.tenantId;

  constructor(
    private readonly cls: ClsService,
    private readonly codec: TenantEnvelopeCodec,
    private readonly pipeline: TenantJobPipeline,
    private readonly processors: ScopedProcessorResolver,
  ) {}

  createProcessor(
    host: TenantWorkerHost,
    definition: TenantQueueDefinition,
    processorOptions: TenantProcessorOptions,
  ): Processor {
    const handler = this.processors.handlerOf(host, this.tenantOf);
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

  /** The processor instance that handles `job` (for its worker events); see the resolver. */
  hostFor(
    host: TenantWorkerHost,
    job: Job | undefined,
  ): TenantWorkerHost | Promise<TenantWorkerHost> {
    return this.processors.hostFor(host, job, this.tenantOf);
  }

  /** Runs `listener` in the tenant context of `job` (for worker events). */
  runInJobContext(job: Job | undefined, listener: () => void): void {
    return this.openScope(() => {
      const envelope = job ? this.codec.envelopeOf(job) : undefined;
      // BullMQ emits `active` before the job is opened: its listeners get `job.tenant` too (in
      // the field the module's jobs declare; `job.data` keeps `_tenant` until the job opens).
      if (envelope && job instanceof TenantBullJob && job.tenant === undefined) {
        job.tenant = envelope;
      }
      if (job) {
        // The event's job, named in the listener's log lines (`tenantLogFields`), with its tenant.
        const state = new JobTenantState(undefined, job.id);
        if (envelope) state.fill(envelope);
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

  /** The stages' `settled` hooks (a floor tenant's release is waited for), then the scope. */
  private settled(run: JobRun, result: unknown): unknown {
    const waiting = run.settle(result);
    if (waiting) {
      return waiting.then(
        () => this.closeScope(run, result),
        (error: unknown) => this.failed(run, error),
      );
    }
    return this.closeScope(run, result);
  }

  private closeScope(run: JobRun, result: unknown): unknown {
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
      run.fail(error);
    } catch (hookError) {
      this.logger.error(`${tenantLogFields()} a stage's failed hook threw: ${hookError}`);
    }
    try {
      const disposers = endJobScope(run);
      if (disposers) await runDisposers(disposers, run, this.logger);
    } finally {
      run.state.clear();
    }
    throw toBullError(error, run.job, this.logger);
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
}
