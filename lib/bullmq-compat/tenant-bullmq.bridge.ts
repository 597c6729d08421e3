import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  Type,
} from '@nestjs/common';
import { DiscoveryService, ModuleRef } from '@nestjs/core';
import { QueueEventsHost, WorkerHost, getQueueToken } from '@nestjs/bullmq';
import type { Job, Processor, QueueEvents, Worker } from 'bullmq';
import { assertRedisBackend } from '../core/bullmq';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { TenantWorkerLauncher } from '../core/processor/worker-launcher';
import { TenantJobRunner } from '../core/processor/tenant-job.runner';
import { useTenantJobs } from '../core/processor/tenant-bull-job';
import { TenantProcessorExplorer } from '../core/processor/tenant-processor.explorer';
import { FailedBootCloser } from '../core/processor/failed-boot.closer';
import { TenantProcessorOptions } from '../core/processor/tenant-processor.decorator';
import { TenantWorkerHost } from '../core/processor/tenant-worker-host';
import {
  TenantWorkerEventSource,
  WorkerEventSource,
} from '../core/processor/worker-event-source.decorator';
import type { TenantQueue } from '../core/queues/tenant-queue';
import { Messages } from '../tenant-queue.messages';
import { adoptWorker, claimQueues, notifyBound, refuseWorker } from './processor-seam';

/** @internal The tenant queues one `TenantBullMqModule.registerQueue(...)` declared. */
export const TENANT_BULLMQ_QUEUES = Symbol('TENANT_BULLMQ_QUEUES');

/**
 * Adopts the `@nestjs/bullmq` workers of this module's queues at bootstrap: their jobs run
 * through the tenant runner (fresh context, envelope check, guards, metrics), and the module's
 * worker plugins (fair-slot release, dead letters, metrics) attach to them. Until then their
 * jobs wait (see `processor-seam.ts`), so none runs without its tenant.
 */
@Injectable()
@TenantWorkerEventSource()
export class TenantBullMqBridge
  implements
    OnApplicationBootstrap,
    BeforeApplicationShutdown,
    OnApplicationShutdown,
    WorkerEventSource
{
  private readonly byQualifiedName = new Map<string, TenantQueue<any>>();
  private readonly byName = new Map<string, TenantQueue<any>>();
  private readonly release: () => void;

  constructor(
    @Inject(TENANT_BULLMQ_QUEUES) queues: TenantQueue<any>[],
    private readonly discovery: DiscoveryService,
    private readonly moduleRef: ModuleRef,
  ) {
    for (const queue of queues) {
      this.byQualifiedName.set(queue.bullQueue.qualifiedName, queue);
      this.byName.set(queue.name, queue);
    }
    this.release = claimQueues([...this.byQualifiedName.keys()]);
  }

  onApplicationBootstrap(): Promise<void> {
    return this.moduleRef.get(FailedBootCloser, { strict: false }).guard(() => this.adoptWorkers());
  }

  private adoptWorkers(): void {
    try {
      this.assertNoLeftoverQueues();
      const found = [...this.workers()];
      // All checked before any is adopted: a refused boot runs none of their jobs.
      for (const { wrapper, worker, queue } of found) {
        const name = (wrapper.metatype as Type | undefined)?.name ?? String(wrapper.name);
        if (!wrapper.isDependencyTreeStatic()) {
          throw new InvalidTenantQueueOptionsError(
            Messages.bullMqScopedProcessor(name, queue.name),
          );
        }
        assertRedisBackend(queue.name, worker);
      }
      const runner = this.moduleRef.get(TenantJobRunner, { strict: false });
      for (const { host, worker, queue } of found) this.adopt(runner, host, worker, queue);
      this.adoptQueueEvents();
    } catch (error) {
      this.refuseUnadopted();
      throw error;
    } finally {
      this.release();
    }
    notifyBound();
  }

  /** The `@Processor` hosts of this module's queues: their `@OnTenantWorkerEvent` methods bind. */
  bindsWorkerEventsOf(host: object): boolean {
    for (const found of this.workers()) if (found.host === host) return true;
    return false;
  }

  /**
   * Before any connection closes: the workers of this module's queues that were not adopted (the
   * boot failed, or never reached its bootstrap) take no more jobs, and put back those they took.
   */
  beforeApplicationShutdown(): void {
    this.refuseUnadopted();
  }

  onApplicationShutdown(): void {
    this.release();
  }

  private refuseUnadopted(): void {
    for (const { worker } of this.workers()) refuseWorker(worker);
  }

  /**
   * The `QueueEvents` of `@QueueEventsListener` hosts on this module's queues close with the
   * workers, within the shutdown bound (`@nestjs/bullmq` closes them with none).
   */
  private adoptQueueEvents(): void {
    const launcher = this.moduleRef.get(TenantWorkerLauncher, { strict: false });
    for (const { built, queue } of this.built(QueueEventsHost, '_queueEvents')) {
      launcher.adoptQueueEvents(built as QueueEvents, queue.name);
    }
  }

  /** The `@nestjs/bullmq` workers (`@Processor` hosts) of this module's queues. */
  private *workers() {
    for (const { wrapper, host, built, queue } of this.built(WorkerHost, '_worker')) {
      yield { wrapper, host: host as WorkerHost, worker: built as Worker, queue };
    }
  }

  /**
   * What `@nestjs/bullmq` built (in the host's private `field`) for the hosts of class `type` on
   * this module's queues.
   */
  private *built(type: abstract new (...args: never[]) => object, field: string) {
    for (const wrapper of this.discovery.getProviders()) {
      const host: unknown = wrapper.instance;
      if (!(host instanceof type)) continue;
      const built = (host as Record<string, { qualifiedName: string } | undefined>)[field];
      const queue = built && this.byQualifiedName.get(built.qualifiedName);
      if (queue) yield { wrapper, host, built, queue };
    }
  }

  /**
   * Refuses a `BullModule.registerQueue` of one of this module's queue names: it provides
   * `@InjectQueue(name)` too, with BullMQ's own queue under its own prefix, and whichever token
   * Nest resolves, jobs run without their tenant (a producer's raw adds) or never (a worker on
   * the other queue).
   */
  private assertNoLeftoverQueues(): void {
    const byToken = new Map<unknown, TenantQueue<any>>();
    for (const queue of this.byName.values()) byToken.set(getQueueToken(queue.name), queue);
    for (const wrapper of this.discovery.getProviders()) {
      // The token first: other providers' instances may be proxies that throw when read.
      const ours = byToken.get(wrapper.token);
      if (!ours) continue;
      const qualifiedName = (wrapper.instance as { qualifiedName?: unknown } | null)?.qualifiedName;
      if (typeof qualifiedName !== 'string' || qualifiedName === ours.bullQueue.qualifiedName) {
        continue;
      }
      throw new InvalidTenantQueueOptionsError(
        Messages.bullMqQueueTwice(ours.name, qualifiedName, ours.bullQueue.qualifiedName),
      );
    }
  }

  private adopt(
    runner: TenantJobRunner,
    host: WorkerHost,
    worker: Worker,
    queue: TenantQueue<any>,
  ): void {
    const options: TenantProcessorOptions = {
      concurrency: worker.opts.concurrency,
      lockDuration: worker.opts.lockDuration,
    };
    useTenantJobs(worker);
    adoptWorker(worker, (inner) =>
      runner.createProcessor(hostCalling(host, inner), queue.definition, options),
    );
    // The launcher closes it before the fair gates, so its last completions still free slots.
    this.moduleRef
      .get(TenantWorkerLauncher, { strict: false })
      .adopt(worker, queue.definition, options);
    this.moduleRef
      .get(TenantProcessorExplorer, { strict: false })
      .bindEvents(host as unknown as TenantWorkerHost, worker);
  }
}

/**
 * The processor as the runner sees it: the app's instance (its class carries the guard and
 * `@Idempotent` metadata), whose `process` calls what `@nestjs/bullmq` decorated (so other
 * decorations, e.g. an APM's, still run), with the original method's metadata copied over.
 */
function hostCalling(host: WorkerHost, inner: Processor): TenantWorkerHost {
  const original = host.process;
  // Its arity tells the runner whether BullMQ's signal is wanted.
  const process =
    inner.length >= 3
      ? (job: Job, token?: string, signal?: AbortSignal) => inner(job, token, signal)
      : (job: Job, token?: string) => inner(job, token);
  for (const key of Reflect.getMetadataKeys(original)) {
    Reflect.defineMetadata(key, Reflect.getMetadata(key, original), process);
  }
  const adapter = Object.create(host) as TenantWorkerHost;
  Object.defineProperty(adapter, 'process', { value: process });
  return adapter;
}
