import { Injectable, OnApplicationBootstrap, Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { PIPES_METADATA } from '@nestjs/common/constants';
import { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { InvalidTenantQueueOptionsError, UnknownTenantQueueError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { MAX_TIMEOUT } from '../envelope/job-run-options';
import { TenantQueueRegistry } from '../queues/tenant-queue.registry';
import { TenantWorkerLauncher } from './worker-launcher';
import { ScopedProcessorResolver } from './scoped-processor.resolver';
import { TenantJobRunner } from './tenant-job.runner';
import { TenantProcessorMetadataAccessor } from './tenant-processor.metadata-accessor';
import { TenantProcessorOptions } from './tenant-processor.decorator';
import { TenantWorkerHost } from './tenant-worker-host';
import {
  WORKER_OPTION_NAMES,
  misspeltWorkerOption,
  workerOptionsProblem,
} from './worker-options.check';
import { unknownOptionWhy } from '../options/option-names';
import { jobLogRef, tenantLogFields } from '../context/tenant-log-fields';
import { TenantQueueLogger } from '../logging/tenant-queue-logger';
import { TenantSeams } from '../seams/tenant-seams';
import { WorkerEventSource } from './worker-event-source.decorator';
import { FailedBootCloser } from './failed-boot.closer';
import { thrownText } from '../logging/call-listener';

/**
 * Finds every `@TenantProcessor` at bootstrap and has the worker launcher start its workers. A processor
 * that depends on request-scoped providers is resolved per job (see `TenantJobRunner`).
 */
@Injectable()
export class TenantProcessorExplorer implements OnApplicationBootstrap {
  private readonly logger = new TenantQueueLogger('TenantQueue');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: TenantProcessorMetadataAccessor,
    private readonly registry: TenantQueueRegistry,
    private readonly runner: TenantJobRunner,
    private readonly launcher: TenantWorkerLauncher,
    private readonly processors: ScopedProcessorResolver,
    private readonly seams: TenantSeams,
    private readonly failedBoot: FailedBootCloser,
  ) {}

  onApplicationBootstrap(): Promise<void> {
    return this.failedBoot.guard(() => this.startProcessors());
  }

  private startProcessors(): void {
    const seen = new Set<string>();
    for (const wrapper of this.discovery.getProviders()) {
      const metadata = this.processorMetadata(wrapper);
      if (!metadata) continue;
      const host = wrapper.instance;
      if (!(host instanceof TenantWorkerHost) || typeof host.process !== 'function') {
        throw new InvalidTenantQueueOptionsError(Messages.processorNotHost(wrapper.name as string));
      }
      if (seen.has(metadata.queue)) {
        throw new InvalidTenantQueueOptionsError(Messages.duplicateProcessor(metadata.queue));
      }
      seen.add(metadata.queue);
      if (!this.registry.getQueueNames().includes(metadata.queue)) {
        throw new UnknownTenantQueueError(
          Messages.processorQueueUnknown(wrapper.name as string, metadata.queue),
        );
      }
      const { timeoutMs } = metadata.options;
      if (
        timeoutMs !== undefined &&
        (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT)
      ) {
        throw new InvalidTenantQueueOptionsError(
          Messages.processorTimeoutInvalid(
            wrapper.name as string,
            metadata.queue,
            timeoutMs,
            MAX_TIMEOUT,
          ),
        );
      }
      const misspelt = misspeltWorkerOption(metadata.options);
      if (misspelt !== undefined) {
        throw new InvalidTenantQueueOptionsError(
          Messages.processorOptionUnknown(
            wrapper.name as string,
            metadata.queue,
            misspelt,
            unknownOptionWhy(misspelt, WORKER_OPTION_NAMES),
          ),
        );
      }
      const problem = workerOptionsProblem(metadata.options);
      if (problem) {
        throw new InvalidTenantQueueOptionsError(
          Messages.processorOptionInvalid(wrapper.name as string, metadata.queue, problem),
        );
      }
      // Pipes bind to a handler's decorated parameters; process(job) has none, so they never run.
      if (
        [host.constructor, host.process].some(
          (target) =>
            (Reflect.getMetadata(PIPES_METADATA, target) as unknown[] | undefined)?.length,
        )
      ) {
        this.logger.warn(Messages.processorPipesIgnored(wrapper.name as string, metadata.queue));
      }
      // A processor that depends on request-scoped providers is resolved per job by the runner.
      if (!wrapper.isDependencyTreeStatic()) this.processors.useScopedHost(host, wrapper);
      // One worker per pool this process consumes (a queue without pools is its only pool).
      for (const pool of this.registry.poolsToConsume(metadata.queue, metadata.options.pools)) {
        this.start(host, pool, metadata.options);
      }
    }
    this.assertWorkerEventsBound();
  }

  /**
   * Refuses `@OnTenantWorkerEvent` on a provider no worker of the module calls (not a
   * `@TenantProcessor`, and no `WorkerEventSource` binds it: a `@nestjs/bullmq` `@Processor` on a
   * queue `TenantBullMqModule` does not declare, a plain service): its listener would never run.
   */
  private assertWorkerEventsBound(): void {
    const sources = this.seams.instances<WorkerEventSource>('worker-event-source');
    const checked = new Set<unknown>();
    for (const wrapper of this.discovery.getProviders()) {
      const { instance, metatype } = wrapper;
      if (!instance || typeof instance !== 'object' || typeof metatype !== 'function') continue;
      if (checked.has(instance) || this.processorMetadata(wrapper)) continue;
      checked.add(instance);
      const prototype = (metatype as Type).prototype as Record<string, unknown> | undefined;
      if (!prototype || !(instance instanceof (metatype as Type))) continue;
      const method = this.scanner
        .getAllMethodNames(prototype)
        .find((name) => this.accessor.getWorkerEvent(prototype[name] as () => unknown));
      if (method === undefined || sources.some((source) => source.bindsWorkerEventsOf(instance))) {
        continue;
      }
      throw new InvalidTenantQueueOptionsError(
        Messages.workerEventUnbound(
          (metatype as Type).name,
          method,
          this.accessor.getWorkerEvent(prototype[method] as () => unknown)!,
          typeof (instance as { process?: unknown }).process === 'function',
        ),
      );
    }
  }

  private processorMetadata(wrapper: InstanceWrapper) {
    if (!wrapper.metatype || !wrapper.instance) return;
    return this.accessor.getProcessor(wrapper.metatype as Type);
  }

  private start(host: TenantWorkerHost, queueName: string, options: TenantProcessorOptions): void {
    const { definition } = this.registry.getQueue(queueName);
    this.bindEvents(host, this.launcher.launch(host, definition, options).events);
  }

  /**
   * @internal Subscribes `@OnTenantWorkerEvent` methods to the consumer's events (also an adopted
   * `@nestjs/bullmq` worker's, for its `@Processor` host).
   */
  bindEvents(
    host: TenantWorkerHost,
    emitter: { on(event: string, listener: (...args: any[]) => void): unknown },
  ): void {
    const prototype = Object.getPrototypeOf(host);
    for (const method of this.scanner.getAllMethodNames(prototype)) {
      const event = this.accessor.getWorkerEvent(prototype[method]);
      if (!event) continue;
      emitter.on(event, (...args: unknown[]) => {
        const job =
          args[0] && typeof args[0] === 'object' && 'queueName' in args[0] ? args[0] : undefined;
        this.runner.runInJobContext(job as never, () => {
          Promise.resolve()
            .then(() => {
              const target = this.runner.hostFor(host, job as never);
              if (!(target instanceof Promise)) return (target as any)[method](...args);
              return target.then((scoped) => (scoped as any)[method](...args));
            })
            .catch((error: unknown) =>
              this.logger.error(
                `${tenantLogFields(jobLogRef(job as never))} @OnTenantWorkerEvent('${event}') ${method} threw: ${thrownText(error)}`,
              ),
            );
        });
      });
    }
  }
}
