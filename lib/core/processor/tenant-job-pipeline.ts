import { Messages } from '../../tenant-queue.messages';
import { JOB_PHASES, JobPhase } from './job-phases';
import { stagePhaseOf } from './tenant-job-stage.decorator';
import { Injectable } from '@nestjs/common';
import type { Job, Worker } from 'bullmq';
import { TenantQueueDefinition } from '../types/queue-definition.interface';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { TenantJob } from '../types/tenant-job.interface';
import { TenantProcessorOptions } from './tenant-processor.decorator';
import { TenantWorkerHost } from './tenant-worker-host';
import { SeamProvider, bySeamPlace } from '../seams/seam-declaration';
import { TenantSeams } from '../seams/tenant-seams';

/** What a job stage knows about the job it wraps. */
export interface JobRunContext {
  job: TenantJob;
  definition: TenantQueueDefinition;
  host: TenantWorkerHost;
  processorOptions: TenantProcessorOptions;
  /** The validated envelope; undefined for a system job without a tenant. */
  envelope: TenantEnvelope | undefined;
  token: string | undefined;
  /**
   * Aborted when the attempt must stop (BullMQ cancellation, or a timeout stage). BullMQ gives a
   * signal only to a processor whose `process()` declares it (or that has a `timeoutMs`).
   */
  signal: AbortSignal | undefined;
  /** @internal `JobScope`'s disposers: none yet (undefined), some, or closed (null). */
  disposers?: (() => unknown)[] | null;
  /**
   * `performance.now()` when the attempt's stages started, for a stage's `settled` / `failed`
   * (how long the attempt ran); 0 on a processor none of whose stages has them.
   */
  readonly startedAt: number;
}

/**
 * One step around every job handler, inside the job's tenant context (guards, timeouts,
 * idempotency, metrics). Stages run phase by phase (`JOB_PHASES`); each calls `next()` to continue.
 */
export interface JobStage {
  /** Wraps the rest of the stages and the handler; call `next()` to go on. */
  run?(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown>;
  /**
   * After the stages and the handler succeeded, before the job's scope closes and BullMQ records
   * it: for a stage that acts on the outcome without wrapping `next()` (no closure or promise per
   * job). A promise returned is waited for; a rejection fails the attempt.
   */
  settled?(context: JobRunContext, result: unknown): void | Promise<void>;
  /** After the stages or the handler threw (or a deadline passed); must not throw. */
  failed?(context: JobRunContext, error: unknown): void;
  /**
   * Whether the stage can act on the jobs of this processor, asked once when its worker starts:
   * a stage that answers false is left out of that processor's stage list. Absent: it applies.
   */
  appliesTo?(
    definition: TenantQueueDefinition,
    processorOptions: TenantProcessorOptions,
    host: TenantWorkerHost,
  ): boolean;
}

/** Completes the CLS context a worker event's listener runs in (nestjs-cls plugin hooks). */
export interface WorkerEventSetup {
  around(job: Job | undefined, listener: () => void): void;
}

/** The events of a consumer: a BullMQ worker's, or the testing module's inline consumer's. */
export type WorkerEvents = Pick<Worker, 'on'>;

/**
 * Hooks a feature into each consumer the module starts (e.g. releasing fair slots): it listens to
 * the worker's events, which the testing module's inline consumer emits too.
 */
export interface WorkerPlugin {
  attach(
    worker: WorkerEvents,
    definition: TenantQueueDefinition,
    options: TenantProcessorOptions,
  ): void;
}

/**
 * @internal Where features plug into the job path: the `@TenantJobStage` and `@TenantWorkerPlugin`
 * providers (found by discovery, in their declared order) and stages added with `useStage`.
 * Workers start at bootstrap, after every provider is built.
 */
@Injectable()
export class TenantJobPipeline {
  /** Stages added with `useStage`, after the discovered ones of the same phase and order. */
  private readonly added: SeamProvider<JobStage>[] = [];
  private stageList: JobStage[] | undefined;
  private stageVersion = 0;
  private eventSetup: WorkerEventSetup | undefined;

  constructor(private readonly seams: TenantSeams) {}

  /**
   * Adds a stage in `phase` at `order`, or where its class's `@TenantJobStage` puts it (such
   * providers are found without it).
   */
  useStage(stage: JobStage, phase: JobPhase | undefined = stagePhaseOf(stage), order = 0): void {
    const index = phase === undefined ? -1 : JOB_PHASES.indexOf(phase);
    if (index < 0) {
      throw new TypeError(Messages.stageWithoutPhase(stage.constructor?.name, JOB_PHASES));
    }
    if (this.added.some((entry) => entry.instance === stage)) return;
    this.added.push({ instance: stage, seam: { kind: 'stage', phase: index, order } });
    this.stageList = undefined;
    this.stageVersion++;
  }

  /** The CLS setup worker events run in (one per app: the module's own). */
  useWorkerEventSetup(setup: WorkerEventSetup): void {
    this.eventSetup = setup;
  }

  /** @internal Runs `listener` after the worker-event setup, if any. */
  aroundWorkerEvent(job: Job | undefined, listener: () => void): void {
    if (this.eventSetup) this.eventSetup.around(job, listener);
    else listener();
  }

  /** @internal Bumped by each `useStage`, so a stage list built earlier can tell it is stale. */
  get version(): number {
    return this.stageVersion;
  }

  /** @internal The stages that can act on one processor's jobs, in order. */
  stagesFor(
    definition: TenantQueueDefinition,
    processorOptions: TenantProcessorOptions,
    host: TenantWorkerHost,
  ): JobStage[] {
    return this.stages.filter(
      (stage) => !stage.appliesTo || stage.appliesTo(definition, processorOptions, host),
    );
  }

  /** Every stage, outermost first: by phase, then order. */
  get stages(): readonly JobStage[] {
    this.stageList ??= bySeamPlace([
      ...this.seams
        .providers<JobStage>('stage')
        .filter((found) => !this.added.some((entry) => entry.instance === found.instance)),
      ...this.added,
    ]).map((entry) => entry.instance);
    return this.stageList;
  }

  get workerPlugins(): readonly WorkerPlugin[] {
    return this.seams.instances<WorkerPlugin>('worker-plugin');
  }
}
