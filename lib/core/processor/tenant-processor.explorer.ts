import { Inject, Injectable, Logger, OnApplicationBootstrap, Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { WorkerOptions } from 'bullmq';
import { TenantWorker } from './tenant-bull-job';
import { InvalidTenantQueueOptionsError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core.options';
import { TenantQueueRegistry } from '../queues/tenant-queue.registry';
import { TenantJobPipeline } from './tenant-job-pipeline';
import { TenantJobRunner } from './tenant-job.runner';
import { TenantProcessorMetadataAccessor } from './tenant-processor.metadata-accessor';
import { TenantProcessorOptions } from './tenant-processor.decorator';
import { TenantWorkerHost } from './tenant-worker-host';
import { jobLogRef, tenantLogFields } from '../context/tenant-log-fields';

/**
 * Finds every `@TenantProcessor` at bootstrap and starts one BullMQ worker for it. A processor
 * that depends on request-scoped providers is resolved per job (see `TenantJobRunner`).
 */
@Injectable()
export class TenantProcessorExplorer implements OnApplicationBootstrap {
  private readonly logger = new Logger('TenantQueue');

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: TenantProcessorMetadataAccessor,
    protected readonly registry: TenantQueueRegistry,
    protected readonly runner: TenantJobRunner,
    private readonly pipeline: TenantJobPipeline,
  ) {}

  onApplicationBootstrap(): void {
    const seen = new Set<string>();
    for (const wrapper of this.discovery.getProviders()) {
      const metadata = this.processorMetadata(wrapper);
      if (!metadata) continue;
      const host = wrapper.instance;
      if (!(host instanceof TenantWorkerHost)) {
        throw new InvalidTenantQueueOptionsError(Messages.processorNotHost(wrapper.name as string));
      }
      if (seen.has(metadata.queue)) {
        throw new InvalidTenantQueueOptionsError(Messages.duplicateProcessor(metadata.queue));
      }
      seen.add(metadata.queue);
      // A processor that depends on request-scoped providers is resolved per job by the runner.
      if (!wrapper.isDependencyTreeStatic()) this.runner.useScopedHost(host, wrapper);
      // One worker per pool this process consumes (a queue without pools is its only pool).
      for (const pool of this.registry.poolsToConsume(metadata.queue, metadata.options.pools)) {
        this.start(host, pool, metadata.options);
      }
    }
  }

  private processorMetadata(wrapper: InstanceWrapper) {
    if (!wrapper.metatype || !wrapper.instance) return;
    return this.accessor.getProcessor(wrapper.metatype as Type);
  }

  protected start(
    host: TenantWorkerHost,
    queueName: string,
    options: TenantProcessorOptions,
  ): void {
    const queue = this.registry.getQueue(queueName);
    const worker = new TenantWorker(
      queue.name,
      this.runner.createProcessor(host, queue.definition, options),
      {
        telemetry: this.options.telemetry,
        ...normaliseKeepJobs(options),
        connection: this.options.connection,
        prefix: queue.definition.bullPrefix,
      },
    );
    worker.on('error', (error) =>
      this.logger.error(`${tenantLogFields()} worker ${queue.name}: ${error.message}`),
    );
    for (const plugin of this.pipeline.workerPlugins)
      plugin.attach(worker, queue.definition, options);
    this.bindEvents(host, worker);
    host.attachWorker(worker);
    this.registry.addWorker(queue.name, worker);
  }

  /** Subscribes `@OnTenantWorkerEvent` methods; `emitter` is the BullMQ worker (or a test double). */
  protected bindEvents(
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
            .catch((error: Error) =>
              this.logger.error(
                `${tenantLogFields(jobLogRef(job as never))} @OnTenantWorkerEvent('${event}') ${method} threw: ${error?.message}`,
              ),
            );
        });
      });
    }
  }
}

/** bullmq 6.7 mishandles a boolean `removeOnComplete`/`removeOnFail` at worker level. */
function normaliseKeepJobs(options: TenantProcessorOptions): Omit<WorkerOptions, 'connection'> {
  const fix = (value: WorkerOptions['removeOnComplete'] | boolean | undefined) =>
    value === true ? { count: 0 } : value === false ? undefined : value;
  return {
    ...options,
    removeOnComplete: fix(options.removeOnComplete as never),
    removeOnFail: fix(options.removeOnFail as never),
  };
}
