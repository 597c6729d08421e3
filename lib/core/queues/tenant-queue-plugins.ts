import { Injectable } from '@nestjs/common';
import { CoreQueueOptions, TenantQueueDefinition } from '../types/queue-definition.interface';
import { JobDispatcher, PreparedJob, directDispatcher } from './job-dispatcher.interface';
import { JobRouter, QueueFeature } from './queue-feature.interface';

/** Told about jobs a `TenantQueue` has just written (after dispatch); must not throw or block. */
export type EnqueueObserver = (definition: TenantQueueDefinition, jobs: PreparedJob[]) => void;

/**
 * @internal Where features plug into the producers: dispatchers (the fair gate), checks of queues
 * and jobs, dispatcher wrappers (telemetry), the pool router, observers of writes (metrics).
 * Features register in their constructor; each queue asks once, when it is created or first used.
 */
@Injectable()
export class TenantQueuePlugins {
  private readonly dispatchers: ((
    definition: TenantQueueDefinition,
  ) => JobDispatcher | undefined)[] = [];
  private readonly enqueueObservers: EnqueueObserver[] = [];

  useEnqueueObserver(observer: EnqueueObserver): void {
    this.enqueueObservers.push(observer);
  }

  /** @internal Called by `TenantQueue` after a successful dispatch. */
  notifyEnqueued(definition: TenantQueueDefinition, jobs: PreparedJob[]): void {
    for (const observer of this.enqueueObservers) observer(definition, jobs);
  }

  /** A factory that may claim a queue's dispatch path (the fair gate does, when fairness is on). */
  useDispatcher(factory: (definition: TenantQueueDefinition) => JobDispatcher | undefined): void {
    this.dispatchers.push(factory);
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

  /** @internal The key group a feature gives a queue (its hash tag), if any. */
  keyGroupOf(options: Readonly<CoreQueueOptions>): string | undefined {
    for (const feature of this.queueFeatures) {
      const group = feature.keyGroupOf?.(options);
      if (group !== undefined) return group;
    }
    return undefined;
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
