import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { settlesWithin } from '../redis/tenant-queue.redis';
import { Worker } from 'bullmq';
import { TenantContext } from '../context/tenant-context';
import { TenantEnvelopeCodec } from '../envelope/tenant-envelope.codec';
import { InvalidTenantQueueOptionsError, UnknownTenantQueueError } from '../errors';
import { CoreQueueOptions, TenantQueueDefinition } from '../types/queue-definition.interface';
import { TenantQueuePlugins } from './tenant-queue-plugins';
import { PreparedJob } from './job-dispatcher.interface';
import { JobRoute } from './queue-feature.interface';
import { jobOptionsProblem } from './job-options.check';
import { TENANT_QUEUE_BACKEND, TenantQueueBackend } from './queue-backend';
import { QUEUE_NAME_RULE, isQueueName, poolsToConsume } from './queue-names';
import { TenantJobRouter, TenantQueue } from './tenant-queue';
import { bullPrefixFor } from '../../tenant-queue.constants';
import { Messages } from '../../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../options/core.options';
import { differingOptions } from '../options/option-names';
const DEFAULT_ATTEMPTS = 3;
const DEFAULT_BACKOFF = { type: 'exponential', delay: 1000, jitter: 0.5 } as const;

/**
 * Runtime registry of this app's tenant queues (and, read from the worker launcher, their
 * workers): the public way to reach them. Closes the queues on shutdown, after the workers.
 * @publicApi
 */
@Injectable()
export class TenantQueueRegistry implements OnApplicationShutdown {
  private readonly queues = new Map<string, TenantQueue<any>>();
  /** What each queue's first `registerQueue` declared: another one must say the same. */
  private readonly declared = new Map<string, CoreQueueOptions>();
  private workerLookup: (name: string) => Worker | undefined = () => undefined;
  private refusedLookup: (worker: Worker) => boolean = () => false;

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
    private readonly context: TenantContext,
    private readonly codec: TenantEnvelopeCodec,
    private readonly plugins: TenantQueuePlugins,
    @Inject(TENANT_QUEUE_BACKEND) private readonly backend: TenantQueueBackend,
  ) {}

  /**
   * @internal A `registerQueue` declaration (of either module): the queue, refused when the name
   * was declared before with other options, of which only the first would apply.
   */
  declareQueue(input: CoreQueueOptions): TenantQueue<any> {
    const earlier = this.declared.get(input.name);
    if (earlier !== undefined && earlier !== input && !isDeepStrictEqual(earlier, input)) {
      throw new InvalidTenantQueueOptionsError(
        Messages.queueDeclaredTwice(input.name, differingOptions(earlier, input)),
      );
    }
    const queue = this.createQueue(input);
    this.declared.set(input.name, earlier ?? input);
    return queue;
  }

  /**
   * @internal Creates the producer for a `registerQueue` declaration, and one queue per dedicated
   * pool (`imports-acme`), registered under the pool's name with the queue's options.
   */
  createQueue(input: CoreQueueOptions): TenantQueue<any> {
    const definition = this.define(input);
    const existing = this.queues.get(definition.name);
    if (existing?.definition.poolOf !== undefined) {
      throw new InvalidTenantQueueOptionsError(
        Messages.poolNameTaken(definition.name, `a pool of "${existing.definition.poolOf}"`),
      );
    }
    if (existing) return existing;
    const pools = this.plugins.poolsOf(input);
    for (const pool of pools) {
      if (this.queues.has(pool)) {
        const owner = this.queues.get(pool)!.definition.poolOf;
        throw new InvalidTenantQueueOptionsError(
          Messages.poolNameTaken(pool, owner ? `a pool of "${owner}"` : 'a registered queue'),
        );
      }
    }
    if (pools.length === 0) return this.createProducer(definition);
    const pooled: TenantQueueDefinition = { ...definition, pools };
    for (const pool of pools) {
      this.createProducer({
        ...definition,
        name: pool,
        bullPrefix: bullPrefixFor(this.options.prefix, pool, this.plugins.keyGroupOf(input)),
        poolOf: definition.name,
      });
    }
    // The router's provider is asked at the first write, once Nest has built every provider.
    let byPool: JobRoute | undefined;
    const route: TenantJobRouter = async (jobs, ownIds) =>
      (await (byPool ??= this.plugins.routeFor(pooled))(jobs, ownIds)).map((pool) =>
        this.queues.get(pool)!,
      );
    return this.createProducer(pooled, route);
  }

  /**
   * The pools a `@TenantProcessor` on `queue` consumes here: `requested` (checked), or every
   * pool of the queue with the shared pool (the queue itself) last.
   */
  poolsToConsume(queue: string, requested?: string[]): string[] {
    return poolsToConsume(this.getQueue(queue).definition, requested);
  }

  private createProducer(
    definition: TenantQueueDefinition,
    router?: TenantJobRouter,
  ): TenantQueue<any> {
    const bullQueue = this.backend.createQueue(definition);
    const dispatcher = () =>
      this.plugins.wrapDispatcher(
        this.backend.dispatcherFor(definition, this.plugins.dispatcherFor(definition)),
        definition,
      );
    const written = (jobs: PreparedJob[]) => this.plugins.notifyEnqueued(definition, jobs);
    const queue = new TenantQueue(
      definition,
      bullQueue,
      this.context,
      this.codec,
      dispatcher,
      written,
      router,
      // A pool's producer is reached through its queue's, which claims the ids for all pools.
      definition.poolOf === undefined ? this.backend.jobIdOwners(definition) : undefined,
      this.backend.enqueueBound(),
      () => this.plugins.jobCheckFor(definition),
    );
    this.queues.set(definition.name, queue);
    return queue;
  }

  /**
   * @internal Where `getWorker` reads the workers (the worker launcher, which keeps them), and
   * `isWorkerRefused` whether Redis refused one for good.
   */
  useWorkerLookup(
    lookup: (name: string) => Worker | undefined,
    refused: (worker: Worker) => boolean,
  ): void {
    this.workerLookup = lookup;
    this.refusedLookup = refused;
  }

  /**
   * The producer of a registered queue, or of one of its pools by the pool's name (a pool's
   * producer writes to that pool only; the queue's own producer routes each job).
   */
  getQueue<T extends object = Record<string, unknown>>(name: string): TenantQueue<T> {
    const queue = this.queues.get(name);
    if (!queue) throw new UnknownTenantQueueError(Messages.unknownQueue(name));
    return queue;
  }

  /** The worker of a queue, or of one pool by its name, when this process consumes it. */
  getWorker(name: string): Worker | undefined {
    return this.workerLookup(name);
  }

  /**
   * @internal Whether the worker of `name` was paused because Redis refuses its commands
   * (`NOPERM`: the connection's ACL user lacks a permission): it stays paused until the process
   * restarts, so the health check says down.
   */
  isWorkerRefused(name: string): boolean {
    const worker = this.workerLookup(name);
    return worker !== undefined && this.refusedLookup(worker);
  }

  getQueueNames(): string[] {
    return [...this.queues.keys()];
  }

  async onApplicationShutdown(): Promise<void> {
    const queues = [...this.queues.values()];
    this.queues.clear();
    // Within the shutdown bound (the Redis clients' own shutdown drops what is left).
    await settlesWithin(
      Promise.all(queues.map((queue) => queue.bullQueue.close())),
      this.options.shutdownTimeoutMs,
    );
  }

  /** The options of the queues registered so far (pools are not registrations of their own). */
  private registeredOptions(): Readonly<CoreQueueOptions>[] {
    return [...this.queues.values()]
      .filter((queue) => queue.definition.poolOf === undefined)
      .map((queue) => queue.definition.registered);
  }

  private define(input: CoreQueueOptions): TenantQueueDefinition {
    if (!input || !isQueueName(input.name)) {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidOptions('registerQueue.name', QUEUE_NAME_RULE),
      );
    }
    this.plugins.checkQueue(input, this.registeredOptions());
    // The queue's own attempts and backoff by the same rules as its defaultJobOptions'.
    const own = { attempts: input.attempts, backoff: input.backoff };
    for (const [options, path] of [
      [own, ''],
      [input.defaultJobOptions, 'defaultJobOptions.'],
    ] as const) {
      const problem = options && jobOptionsProblem(options, '{}');
      if (problem) {
        throw new InvalidTenantQueueOptionsError(
          Messages.invalidOptions(
            `registerQueue(${input.name}).${path}${problem.option}`,
            problem.why,
          ),
        );
      }
    }
    return {
      name: input.name,
      tenantScoped: input.tenantScoped ?? true,
      systemJobs: new Set(input.systemJobs ?? []),
      defaultJobOptions: {
        attempts: input.attempts ?? DEFAULT_ATTEMPTS,
        backoff: input.backoff ?? DEFAULT_BACKOFF,
        ...input.defaultJobOptions,
      },
      bullPrefix: bullPrefixFor(this.options.prefix, input.name, this.plugins.keyGroupOf(input)),
      registered: input,
    };
  }
}
