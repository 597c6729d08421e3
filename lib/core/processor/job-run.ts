import { JobTenantState } from '../context/tenant-state';
import { TenantQueueDefinition } from '../types/queue-definition.interface';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { TenantJob } from '../types/tenant-job.interface';
import { JobRunContext, JobStage, TenantJobPipeline } from './tenant-job-pipeline';
import { TenantProcessorOptions } from './tenant-processor.decorator';
import { TenantWorkerHost } from './tenant-worker-host';

/** @internal What finally runs a job: `process()`, directly or through Nest's context creator. */
export type JobHandler = (job: TenantJob, token?: string, signal?: AbortSignal) => Promise<unknown>;

/**
 * @internal One processor's side of the pipeline, built when its worker starts: the stages that
 * can act on its jobs (`JobStage.appliesTo`), and whether BullMQ must give it a signal.
 */
export class ProcessorLane {
  /** The stages that wrap a job without a deadline of its own (those with `run`). */
  stages: readonly JobStage[] = [];
  /** The stages of a job whose `_run.timeoutMs` gives it a deadline: as if the processor had one. */
  timedStages: readonly JobStage[] = [];
  /** The stages told of each attempt's outcome (`settled` / `failed`), untimed and timed. */
  settlers: readonly JobStage[] = [];
  timedSettlers: readonly JobStage[] = [];
  /**
   * BullMQ builds an `AbortController` per job for a processor function of 3 parameters: ask for
   * one only when `process()` declares the signal or a deadline can abort it.
   */
  readonly wantsSignal: boolean;
  private version = -1;

  constructor(
    readonly definition: TenantQueueDefinition,
    readonly host: TenantWorkerHost,
    readonly processorOptions: TenantProcessorOptions,
    readonly handler: JobHandler,
    private readonly pipeline: TenantJobPipeline,
  ) {
    this.wantsSignal = host.process.length >= 3 || (processorOptions.timeoutMs ?? 0) > 0;
    this.refresh();
  }

  /** The stage list for a job; rebuilt only if a stage registered after this worker started. */
  stagesFor(timed: boolean): readonly JobStage[] {
    if (this.version !== this.pipeline.version) this.refresh();
    return timed ? this.timedStages : this.stages;
  }

  /** The stages told of a job's outcome (after `stagesFor`, which refreshes both lists). */
  settlersFor(timed: boolean): readonly JobStage[] {
    return timed ? this.timedSettlers : this.settlers;
  }

  private refresh(): void {
    const { definition, host, processorOptions } = this;
    this.version = this.pipeline.version;
    const all = this.pipeline.stagesFor(definition, processorOptions, host);
    const timed =
      (processorOptions.timeoutMs ?? 0) > 0
        ? all
        : this.pipeline.stagesFor(definition, { ...processorOptions, timeoutMs: 1 }, host);
    this.stages = all.filter(wraps);
    this.timedStages = timed.filter(wraps);
    this.settlers = all.filter(settles);
    this.timedSettlers = timed.filter(settles);
  }
}

const wraps = (stage: JobStage) => stage.run !== undefined;
const settles = (stage: JobStage) => stage.settled !== undefined || stage.failed !== undefined;

/**
 * @internal The context of one job attempt, of one fixed shape: every field is declared and set
 * in the constructor (the disposer slot included), so every job shares one hidden class and the
 * inline caches downstream stay monomorphic. It walks the stages by index: `next` is the one
 * function made per job, whatever the number of stages.
 */
export class JobRun implements JobRunContext {
  readonly definition: TenantQueueDefinition;
  readonly host: TenantWorkerHost;
  readonly processorOptions: TenantProcessorOptions;
  envelope: TenantEnvelope | undefined = undefined;
  disposers: (() => unknown)[] | null | undefined = undefined;
  /** The tenant context of the attempt, set once in the CLS store. */
  readonly state: JobTenantState;
  /** Calls the next stage, or the handler after the last one. */
  readonly next: () => Promise<unknown>;
  startedAt = 0;
  private stages: readonly JobStage[] = [];
  private settlers: readonly JobStage[] = [];
  private index = 0;

  constructor(
    private readonly lane: ProcessorLane,
    readonly job: TenantJob,
    readonly token: string | undefined,
    public signal: AbortSignal | undefined,
  ) {
    this.definition = lane.definition;
    this.host = lane.host;
    this.processorOptions = lane.processorOptions;
    this.state = new JobTenantState(this, job.id);
    this.next = () => this.step();
  }

  /** Runs the stages, then the handler; `timed` when the job carries its own deadline. */
  start(timed: boolean): Promise<unknown> {
    this.stages = this.lane.stagesFor(timed);
    this.settlers = this.lane.settlersFor(timed);
    if (this.settlers.length > 0) this.startedAt = performance.now();
    return this.step();
  }

  /** Tells the stages the attempt succeeded; what they return to wait for, if anything. */
  settle(result: unknown): Promise<void> | undefined {
    let waiting: Promise<void> | undefined;
    for (const stage of this.settlers) {
      const more = stage.settled?.(this, result);
      if (more) waiting = waiting ? Promise.all([waiting, more]).then(() => undefined) : more;
    }
    return waiting;
  }

  /** Tells the stages the attempt failed (their hooks must not throw). */
  fail(error: unknown): void {
    for (const stage of this.settlers) stage.failed?.(this, error);
  }

  private step(): Promise<unknown> {
    const stages = this.stages;
    if (this.index < stages.length) return stages[this.index++].run!(this, this.next);
    return this.lane.handler(this.job, this.token, this.signal);
  }
}
