import { Inject, Injectable } from '@nestjs/common';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../options/core.options';
import { TenantSeams } from '../seams/tenant-seams';
import { CoreQueueOptions, TenantQueueDefinition } from '../types/queue-definition.interface';
import { JobDispatcher, PreparedJob, directDispatcher } from './job-dispatcher.interface';
import {
  DispatcherSource,
  EnqueueObserver,
  JobRoute,
  JobRouter,
  QueueFeature,
  QueueOptionsSlice,
  QueuePools,
} from './queue-feature.interface';

/**
 * @internal Where features plug into the producers: dispatchers (the fair gate), checks of queues
 * and jobs, dispatcher wrappers (telemetry), the pool router, observers of writes (metrics), each
 * a decorated provider (`queue-seams.decorator.ts`). Option slices are read as queues register;
 * the providers themselves on a queue's first use, once Nest has built them all.
 */
@Injectable()
export class TenantQueuePlugins {
  constructor(
    private readonly seams: TenantSeams,
    @Inject(TENANT_QUEUE_OPTIONS) private readonly options: ResolvedTenantQueueOptions,
  ) {}

  /** @internal Called by `TenantQueue` after a successful dispatch. */
  notifyEnqueued(definition: TenantQueueDefinition, jobs: PreparedJob[]): void {
    for (const observer of this.seams.instances<EnqueueObserver>('enqueue-observer')) {
      observer.enqueued(definition, jobs);
    }
  }

  dispatcherFor(definition: TenantQueueDefinition): JobDispatcher {
    for (const source of this.seams.instances<DispatcherSource>('dispatcher')) {
      const dispatcher = source.dispatcherFor(definition);
      if (dispatcher) return dispatcher;
    }
    return directDispatcher;
  }

  private slices(): QueueOptionsSlice[] {
    return this.seams.declarations('queue-feature').flatMap((seam) => seam.options ?? []);
  }

  /** @internal Every feature's check of a queue's `registerQueue` options. */
  checkQueue(
    options: Readonly<CoreQueueOptions>,
    earlier: readonly Readonly<CoreQueueOptions>[],
  ): void {
    for (const slice of this.slices()) slice.checkQueue?.(options, earlier);
  }

  /** @internal The key group a feature gives a queue (its hash tag), if any. */
  keyGroupOf(options: Readonly<CoreQueueOptions>): string | undefined {
    for (const slice of this.slices()) {
      const group = slice.keyGroupOf?.(options);
      if (group !== undefined) return group;
    }
    return undefined;
  }

  /** @internal The pools of a queue being registered (none without a router). */
  poolsOf(options: Readonly<CoreQueueOptions>): string[] {
    const [router] = this.seams.declarations('router');
    return router ? (router.options as QueuePools).poolsOf(options, this.options) : [];
  }

  /** @internal Where each job of a pooled queue goes. */
  routeFor(definition: TenantQueueDefinition): JobRoute {
    const [router] = this.seams.instances<JobRouter>('router');
    return router.routeFor(definition);
  }

  /** @internal The features' checks of each job of a queue, as one function (none: undefined). */
  jobCheckFor(definition: TenantQueueDefinition): ((job: PreparedJob) => void) | undefined {
    const checks: ((job: PreparedJob) => void)[] = [];
    for (const feature of this.seams.instances<QueueFeature>('queue-feature')) {
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
    for (const feature of this.seams.instances<QueueFeature>('queue-feature')) {
      if (feature.wrapDispatcher) dispatcher = feature.wrapDispatcher(dispatcher, definition);
    }
    return dispatcher;
  }
}
