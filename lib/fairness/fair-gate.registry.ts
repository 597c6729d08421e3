import { EventEmitter } from 'node:events';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import type { Worker } from 'bullmq';
import { InvalidTenantQueueOptionsError, parseCancelReason } from '../errors';
import { TenantQueueDefinition } from '../interfaces/register-queue-options.interface';
import { isTenantDirectoryConfigured } from '../guards/default-ports';
import { TenantDirectory } from '../interfaces/tenant-directory.interface';
import { TenantJobPipeline } from '../processor/tenant-job-pipeline';
import { TenantProcessorOptions } from '../processor/tenant-processor.decorator';
import { Messages } from '../tenant-queue.messages';
import { TenantQueueRedis } from '../tenant-queue.redis';
import { TenantQueueRegistry } from '../tenant-queue.registry';
import { FairGate, FairHints, SYSTEM_TENANT } from './fair-gate';
import { fairCommands } from './fair-gate.script';
import { isFairnessOn, resolveFairnessOptions } from './fairness-options';
import { SlowLaneEvent } from './slow-lane-event.interface';

const HINT_TTL_MS = 30_000;

/**
 * @internal Owns the fair gate of every queue with fairness on: claims their enqueue path,
 * attaches slot release to their workers, runs the upkeep ticks, and closes it all on shutdown.
 */
@Injectable()
export class FairGateRegistry
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly gates = new Map<string, FairGate>();
  private readonly hintCache = new Map<string, { hint: FairHints[string]; at: number }>();
  private readonly logger = new Logger('TenantFairness');
  readonly events = new EventEmitter();

  constructor(
    pipeline: TenantJobPipeline,
    private readonly registry: TenantQueueRegistry,
    private readonly redis: TenantQueueRedis,
    @Optional() @Inject(TenantDirectory) private readonly directory?: TenantDirectory,
  ) {
    pipeline.useDispatcher((definition) => this.gateFor(definition));
    pipeline.useWorkerPlugin({
      attach: (worker, definition, options) => this.attach(worker, definition, options),
    });
  }

  /** Validates every fair queue's options at bootstrap (a typed error names the field). */
  onModuleInit(): void {
    for (const name of this.registry.getQueueNames()) {
      this.gateFor(this.registry.getQueue(name).definition);
    }
  }

  onApplicationBootstrap(): void {
    for (const gate of this.gates.values()) gate.start();
  }

  gateFor(definition: TenantQueueDefinition): FairGate | undefined {
    if (!isFairnessOn(definition.fairness)) return undefined;
    let gate = this.gates.get(definition.name);
    if (!gate) {
      const options = resolveFairnessOptions(definition.name, definition.fairness!);
      gate = new FairGate(definition, options, {
        commands: () => fairCommands(this.redis.client),
        bullQueue: () => this.registry.getQueue(definition.name).bullQueue,
        hints: (tenants) => this.hints(tenants),
        onSlowLane: (event) => this.events.emit('slowLane', event),
        logger: this.logger,
      });
      this.gates.set(definition.name, gate);
    }
    return gate;
  }

  /** The gate of a registered fair queue, or a typed error saying what to do. */
  get(queueName: string): FairGate {
    const gate = this.gateFor(this.registry.getQueue(queueName).definition);
    if (!gate) throw new InvalidTenantQueueOptionsError(Messages.fairnessOff(queueName));
    return gate;
  }

  onSlowLane(listener: (event: SlowLaneEvent) => void): () => void {
    this.events.on('slowLane', listener);
    return () => this.events.off('slowLane', listener);
  }

  async beforeApplicationShutdown(): Promise<void> {
    // Workers first, so their last completions still free slots before the gates close.
    await Promise.all([...this.gates.keys()].map((name) => this.registry.getWorker(name)?.close()));
    const gates = [...this.gates.values()];
    this.gates.clear();
    await Promise.all(gates.map((gate) => gate.close()));
    this.events.removeAllListeners();
  }

  private attach(
    worker: Worker,
    definition: TenantQueueDefinition,
    options: TenantProcessorOptions,
  ): void {
    const gate = this.gateFor(definition);
    if (!gate) return;
    gate.addConsumer(options.concurrency ?? 1);
    worker.on('completed', (job) => gate.release(job.id!, 'c'));
    worker.on('failed', (job) => {
      // Only the final outcome frees the slot: a retried attempt keeps it.
      if (!job?.id || !job.finishedOn) return;
      gate.release(job.id, parseCancelReason(job.failedReason) ? 'x' : 'f');
    });
  }

  /** Weight and cap from the tenant directory, cached briefly; nothing when there is none. */
  private async hints(tenants: string[]): Promise<FairHints> {
    const out: FairHints = {};
    if (!isTenantDirectoryConfigured(this.directory)) return out;
    const now = Date.now();
    const stale = tenants.filter(
      (t) => t !== SYSTEM_TENANT && (this.hintCache.get(t)?.at ?? 0) + HINT_TTL_MS < now,
    );
    await Promise.all(
      stale.map(async (tenantId) => {
        try {
          const record = await this.directory!.getTenant(tenantId);
          const weight = record?.weight;
          const cap = record?.maxConcurrency;
          this.hintCache.set(tenantId, {
            at: now,
            hint: [
              typeof weight === 'number' && weight > 0 ? weight : false,
              typeof cap === 'number' && cap >= 0 ? Math.floor(cap) : false,
            ],
          });
        } catch {
          // Unknown right now: keep what Redis has.
        }
      }),
    );
    for (const tenantId of stale) {
      const cached = this.hintCache.get(tenantId);
      if (cached?.at === now) out[tenantId] = cached.hint;
    }
    return out;
  }
}
