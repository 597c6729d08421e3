import { Injectable } from '@nestjs/common';
import type { Worker } from 'bullmq';
import { TenantQueueDefinition } from '../types/queue-definition.interface';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { TenantJob } from '../types/tenant-job.interface';
import { JobDispatcher, PreparedJob, directDispatcher } from '../queues/job-dispatcher.interface';
import { JobRouter, QueueFeature } from '../queues/queue-feature.interface';
import { TenantProcessorOptions } from './tenant-processor.decorator';
import { TenantWorkerHost } from './tenant-worker-host';

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
}

/**
 * One step around every job handler, inside the job's tenant context (guards, timeouts,
 * idempotency, metrics). Stages run by ascending `order`; each calls `next()` to continue.
 */
export interface JobStage {
  readonly order: number;
  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown>;
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

/** Hooks a feature into each BullMQ worker the module starts (e.g. releasing fair slots). */
export interface WorkerPlugin {
  attach(worker: Worker, definition: TenantQueueDefinition, options: TenantProcessorOptions): void;
}

/** Told about jobs a `TenantQueue` has just written (after dispatch); must not throw or block. */
export type EnqueueObserver = (definition: TenantQueueDefinition, jobs: PreparedJob[]) => void;

/**
 * @internal Where features plug into the job path. Features register in their constructor or
 * `onModuleInit`; workers start at bootstrap, after every registration.
 */
@Injectable()
export class TenantJobPipeline {
  private readonly stageList: JobStage[] = [];
  private readonly plugins: WorkerPlugin[] = [];
  private readonly dispatchers: ((
    definition: TenantQueueDefinition,
  ) => JobDispatcher | undefined)[] = [];

  private stageVersion = 0;

  useStage(stage: JobStage): void {
    this.stageList.push(stage);
    this.stageList.sort((a, b) => a.order - b.order);
    this.stageVersion++;
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
    return this.stageList.filter(
      (stage) => !stage.appliesTo || stage.appliesTo(definition, processorOptions, host),
    );
  }

  private readonly enqueueObservers: EnqueueObserver[] = [];

  useEnqueueObserver(observer: EnqueueObserver): void {
    this.enqueueObservers.push(observer);
  }

  /** @internal Called by `TenantQueue` after a successful dispatch. */
  notifyEnqueued(definition: TenantQueueDefinition, jobs: PreparedJob[]): void {
    for (const observer of this.enqueueObservers) observer(definition, jobs);
  }

  useWorkerPlugin(plugin: WorkerPlugin): void {
    this.plugins.push(plugin);
  }

  /** A factory that may claim a queue's dispatch path (the fair gate does, when fairness is on). */
  useDispatcher(factory: (definition: TenantQueueDefinition) => JobDispatcher | undefined): void {
    this.dispatchers.push(factory);
  }

  get stages(): readonly JobStage[] {
    return this.stageList;
  }

  get workerPlugins(): readonly WorkerPlugin[] {
    return this.plugins;
  }

  dispatcherFor(definition: TenantQueueDefinition): JobDispatcher {
    for (const factory of this.dispatchers) {
      const dispatcher = factory(definition);
      if (dispatcher) return dispatcher;
    }
    return directDispatcher;
  }

  private readonly queueFeatures: QueueFeature[] = [];
  private router: JobRouter | undefined;

  /** A feature's checks of every queue and job, and its wrapper of each queue's dispatcher. */
  useQueueFeature(feature: QueueFeature): void {
    this.queueFeatures.push(feature);
  }

  /** The router that splits queues into pools (one per app: the pools feature). */
  useRouter(router: JobRouter): void {
    this.router = router;
  }

  /** @internal */
  get jobRouter(): JobRouter | undefined {
    return this.router;
  }

  /** @internal Every feature's check of a queue's `registerQueue` options. */
  checkQueue(options: Parameters<NonNullable<QueueFeature['checkQueue']>>[0]): void {
    for (const feature of this.queueFeatures) feature.checkQueue?.(options);
  }

  /** @internal The features' checks of each job of a queue, as one function (none: undefined). */
  jobCheckFor(definition: TenantQueueDefinition): ((job: PreparedJob) => void) | undefined {
    const checks: ((job: PreparedJob) => void)[] = [];
    for (const feature of this.queueFeatures) {
      const check = feature.jobCheckFor?.(definition);
      if (check) checks.push(check);
    }
    if (checks.length <= 1) return checks[0];
    return (job) => {
      for (const check of checks) check(job);
    };
  }

  /** @internal A queue's dispatcher with every feature's wrapper around it. */
  wrapDispatcher(inner: JobDispatcher, definition: TenantQueueDefinition): JobDispatcher {
    let dispatcher = inner;
    for (const feature of this.queueFeatures) {
      if (feature.wrapDispatcher) dispatcher = feature.wrapDispatcher(dispatcher, definition);
    }
    return dispatcher;
  }
}
