import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationShutdown,
} from '@nestjs/common';
import { Queue, Worker } from 'bullmq';
import { TenantContext } from './context/tenant-context';
import { TenantEnvelopeCodec } from './envelope/tenant-envelope.codec';
import { InvalidTenantQueueOptionsError, UnknownTenantQueueError } from './errors';
import { isFairnessOn, resolveFairnessOptions } from './fairness/fairness-options';
import {
  RegisterTenantQueueOptions,
  TenantQueueDefinition,
} from './interfaces/register-queue-options.interface';
import { TenantJobPipeline } from './processor/tenant-job-pipeline';
import { JobDispatcher } from './producer/job-dispatcher.interface';
import { TenantQueue } from './producer/tenant-queue';
import { bullPrefixFor } from './tenant-queue.constants';
import { Messages } from './tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from './tenant-queue.options';

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const DEFAULT_ATTEMPTS = 3;
const DEFAULT_BACKOFF = { type: 'exponential', delay: 1000, jitter: 0.5 } as const;
const DEFAULT_DEAD_LETTER_CAP = 1000;

/**
 * Runtime registry of this app's tenant queues and workers: the public way to reach them, and
 * the owner that closes them all on shutdown (workers first, then queues).
 */
@Injectable()
export class TenantQueueRegistry implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly queues = new Map<string, TenantQueue<any>>();
  private readonly workers = new Map<string, Worker>();

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
    private readonly context: TenantContext,
    private readonly codec: TenantEnvelopeCodec,
    protected readonly pipeline: TenantJobPipeline,
  ) {}

  /** @internal Creates the producer for a `registerQueue` declaration. */
  createQueue(input: RegisterTenantQueueOptions): TenantQueue<any> {
    const definition = this.define(input);
    if (this.queues.has(definition.name)) return this.queues.get(definition.name)!;
    const bullQueue = this.createBullQueue(definition);
    const dispatcher = () => this.dispatcherFor(definition);
    const queue = new TenantQueue(definition, bullQueue, this.context, this.codec, dispatcher);
    this.queues.set(definition.name, queue);
    return queue;
  }

  protected createBullQueue(definition: TenantQueueDefinition): Queue {
    return new Queue(definition.name, {
      connection: this.options.connection,
      prefix: definition.bullPrefix,
    });
  }

  protected dispatcherFor(definition: TenantQueueDefinition): JobDispatcher {
    return this.pipeline.dispatcherFor(definition);
  }

  /** @internal */
  addWorker(name: string, worker: Worker): void {
    this.workers.set(name, worker);
  }

  getQueue<T extends object = Record<string, unknown>>(name: string): TenantQueue<T> {
    const queue = this.queues.get(name);
    if (!queue) throw new UnknownTenantQueueError(Messages.unknownQueue(name));
    return queue;
  }

  getWorker(name: string): Worker | undefined {
    return this.workers.get(name);
  }

  getQueueNames(): string[] {
    return [...this.queues.keys()];
  }

  async beforeApplicationShutdown(): Promise<void> {
    const workers = [...this.workers.values()];
    this.workers.clear();
    await Promise.all(workers.map((worker) => worker.close()));
  }

  async onApplicationShutdown(): Promise<void> {
    const queues = [...this.queues.values()];
    this.queues.clear();
    await Promise.all(queues.map((queue) => queue.bullQueue.close()));
  }

  private define(input: RegisterTenantQueueOptions): TenantQueueDefinition {
    if (!input || typeof input.name !== 'string' || !QUEUE_NAME.test(input.name)) {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidOptions(
          'registerQueue.name',
          'must be 1-100 letters, digits, "_", "." or "-" (no ":")',
        ),
      );
    }
    if (isFairnessOn(input.fairness)) resolveFairnessOptions(input.name, input.fairness!);
    return {
      name: input.name,
      tenantScoped: input.tenantScoped ?? true,
      systemJobs: new Set(input.systemJobs ?? []),
      defaultJobOptions: {
        attempts: input.attempts ?? DEFAULT_ATTEMPTS,
        backoff: input.backoff ?? DEFAULT_BACKOFF,
        ...input.defaultJobOptions,
      },
      bullPrefix: bullPrefixFor(this.options.prefix, input.name),
      deadLetterCap: input.deadLetterCap ?? DEFAULT_DEAD_LETTER_CAP,
      fairness: input.fairness,
    };
  }
}
