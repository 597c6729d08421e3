import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationShutdown,
} from '@nestjs/common';
import { Queue, Worker } from 'bullmq';
import { TenantContext } from '../context/tenant-context';
import { TenantEnvelopeCodec } from '../envelope/tenant-envelope.codec';
import { InvalidTenantQueueOptionsError, UnknownTenantQueueError } from '../errors';
import { isFairnessOn, resolveFairnessOptions } from '../../fairness/fairness-options';
import {
  RegisterTenantQueueOptions,
  TenantQueueDefinition,
} from '../../interfaces/register-queue-options.interface';
import { PoolIdLedger, RedisPoolIdLedger } from '../../pools/pool-ids.script';
import { isQueueName, poolsToConsume, resolvePools } from '../../pools/pool-options';
import { PoolRouter } from '../../pools/pool-router';
import { TenantJobPipeline } from '../processor/tenant-job-pipeline';
import { EnqueueBound } from './enqueue-bound';
import { JobDispatcher, PreparedJob } from './job-dispatcher.interface';
import { JobIdOwners, RedisJobIdOwners } from './job-id-owners.script';
import { jobOptionsProblem } from './job-options.check';
import { TenantJobRouter, TenantQueue } from './tenant-queue';
import { bullPrefixFor } from '../../tenant-queue.constants';
import { Messages } from '../../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core.options';
import { TenantQueueRedis } from '../redis/tenant-queue.redis';
import { TenantTiers } from '../tenants/tenant-tiers.service';
import { tracedDispatcher } from '../../telemetry/traced-dispatcher';
const DEFAULT_ATTEMPTS = 3;
const DEFAULT_BACKOFF = { type: 'exponential', delay: 1000, jitter: 0.5 } as const;
const DEFAULT_DEAD_LETTER_CAP = 1000;

/**
 * Runtime registry of this app's tenant queues and workers: the public way to reach them, and
 * the owner that closes them all on shutdown (workers first, then queues).
 * @publicApi
 */
@Injectable()
export class TenantQueueRegistry implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly queues = new Map<string, TenantQueue<any>>();
  private readonly workers = new Map<string, Worker>();
  private bound: EnqueueBound | undefined;

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
    private readonly context: TenantContext,
    private readonly codec: TenantEnvelopeCodec,
    protected readonly pipeline: TenantJobPipeline,
    private readonly tiers: TenantTiers,
    private readonly redis: TenantQueueRedis,
  ) {}

  /**
   * @internal Creates the producer for a `registerQueue` declaration, and one queue per dedicated
   * pool (`imports-acme`), registered under the pool's name with the queue's options.
   */
  createQueue(input: RegisterTenantQueueOptions): TenantQueue<any> {
    const definition = this.define(input);
    const existing = this.queues.get(definition.name);
    if (existing?.definition.poolOf !== undefined) {
      throw new InvalidTenantQueueOptionsError(
        Messages.poolNameTaken(definition.name, `a pool of "${existing.definition.poolOf}"`),
      );
    }
    if (existing) return existing;
    const pools = resolvePools(input, this.options.tiers);
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
        bullPrefix: bullPrefixFor(this.options.prefix, pool),
        poolOf: definition.name,
      });
    }
    const router = new PoolRouter(
      definition.name,
      new Set(pools),
      input.routing,
      this.tiers,
      this.poolIds(pooled),
    );
    const route: TenantJobRouter = async (jobs, ownIds) =>
      (await router.route(jobs, ownIds)).map((pool) => this.queues.get(pool)!);
    return this.createProducer(pooled, route);
  }

  /**
   * The pools a `@TenantProcessor` on `queue` consumes here: `requested` (checked), or every
   * pool of the queue with the shared pool (the queue itself) last.
   */
  poolsToConsume(queue: string, requested?: string[]): string[] {
    return poolsToConsume(this.getQueue(queue).definition, requested);
  }

  /** Which tenant uses each caller-chosen job id of a queue (the testing module has none). */
  protected jobIdOwners(definition: TenantQueueDefinition): JobIdOwners | undefined {
    return new RedisJobIdOwners(definition, () => this.redis.producer);
  }

  /** The bound of every enqueue (`enqueueTimeoutMs`); the testing module has no Redis to wait for. */
  protected enqueueBound(): EnqueueBound | undefined {
    this.bound ??= new EnqueueBound(this.options.enqueueTimeoutMs, () => this.redis.producer);
    return this.bound;
  }

  /** Where caller-chosen job ids of a pooled queue went first (the testing module has none). */
  protected poolIds(definition: TenantQueueDefinition): PoolIdLedger | undefined {
    return new RedisPoolIdLedger(definition, () => this.redis.client);
  }

  private createProducer(
    definition: TenantQueueDefinition,
    router?: TenantJobRouter,
  ): TenantQueue<any> {
    const bullQueue = this.createBullQueue(definition);
    const dispatcher = () =>
      tracedDispatcher(this.dispatcherFor(definition), this.options.telemetry);
    const written = (jobs: PreparedJob[]) => this.pipeline.notifyEnqueued(definition, jobs);
    const queue = new TenantQueue(
      definition,
      bullQueue,
      this.context,
      this.codec,
      dispatcher,
      written,
      router,
      // A pool's producer is reached through its queue's, which claims the ids for all pools.
      definition.poolOf === undefined ? this.jobIdOwners(definition) : undefined,
      this.enqueueBound(),
    );
    this.queues.set(definition.name, queue);
    return queue;
  }

  /** On the producer's connection (no offline queue); its outages are logged there, once. */
  protected createBullQueue(definition: TenantQueueDefinition): Queue {
    const queue = new Queue(definition.name, {
      connection: this.redis.producer,
      prefix: definition.bullPrefix,
      telemetry: this.options.telemetry?.bull,
    });
    queue.on('error', () => undefined);
    return queue;
  }

  protected dispatcherFor(definition: TenantQueueDefinition): JobDispatcher {
    return this.pipeline.dispatcherFor(definition);
  }

  /** @internal */
  addWorker(name: string, worker: Worker): void {
    this.workers.set(name, worker);
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
    if (!input || !isQueueName(input.name)) {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidOptions(
          'registerQueue.name',
          'must be 1-100 letters, digits, "_", "." or "-" (no ":")',
        ),
      );
    }
    if (isFairnessOn(input.fairness)) resolveFairnessOptions(input.name, input.fairness!);
    const problem = input.defaultJobOptions && jobOptionsProblem(input.defaultJobOptions, '{}');
    if (problem) {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidOptions(`registerQueue.defaultJobOptions.${problem.option}`, problem.why),
      );
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
      bullPrefix: bullPrefixFor(this.options.prefix, input.name),
      deadLetterCap: input.deadLetterCap ?? DEFAULT_DEAD_LETTER_CAP,
      fairness: input.fairness,
    };
  }
}
