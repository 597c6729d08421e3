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
  /** The stages of a job without a deadline of its own. */
  stages: readonly JobStage[] = [];
  /** The stages of a job whose `_run.timeoutMs` gives it a deadline: as if the processor had one. */
  timedStages: readonly JobStage[] = [];
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

  private refresh(): void {
    const { definition, host, processorOptions } = this;
    this.version = this.pipeline.version;
    this.stages = this.pipeline.stagesFor(definition, processorOptions, host);
    this.timedStages =
      (processorOptions.timeoutMs ?? 0) > 0
        ? this.stages
        : this.pipeline.stagesFor(definition, { ...processorOptions, timeoutMs: 1 }, host);
  }
}

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
  private stages: readonly JobStage[] = [];
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
    return this.step();
  }

  private step(): Promise<unknown> {
    const stages = this.stages;
    if (this.index < stages.length) return stages[this.index++].run(this, this.next);
    return this.lane.handler(this.job, this.token, this.signal);
  }
}
