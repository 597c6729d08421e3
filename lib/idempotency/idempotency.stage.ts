import { TenantJobStage } from '../core/processor/tenant-job-stage.decorator';
import { SYSTEM_BUCKET } from '../tenant-queue.constants';
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DelayedError } from 'bullmq';
import { TenantQueueRedis } from '../core/redis/tenant-queue.redis';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { IDEMPOTENT_METADATA, IdempotentOptions } from './idempotent.decorator';
import { IdempotencyScript } from './idempotency.script';
import { JobRunContext, JobStage } from '../core/processor/tenant-job-pipeline';
import { TenantWorkerHost } from '../core/processor/tenant-worker-host';
import { jobLogRef, tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';

const DEFAULT_TTL = 86_400_000;
const DEFAULT_LEASE = 30_000;
/** Runs without a tenant: a key part longer than any tenant id, so no tenant shares it. */
const NO_TENANT = SYSTEM_BUCKET;
const BUSY_POLL_MS = 1_000;

/**
 * `@Idempotent`: a run whose `(tenant, runId)` already completed is skipped; a run in progress
 * elsewhere holds a leased claim, so a duplicate waits (delayed, no attempt used) instead of
 * running twice. The marker is written when the handler returns, before BullMQ records completion.
 */
@Injectable()
@TenantJobStage('dedupe', 10)
export class IdempotencyStage implements JobStage {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  private readonly script: IdempotencyScript;
  private readonly options = new WeakMap<TenantWorkerHost, IdempotentOptions | null>();
  /** The prefix of a definition's run markers: its queue's, for a dedicated pool too. */
  private readonly markerPrefixes = new WeakMap<TenantQueueDefinition, string>();

  constructor(
    redis: TenantQueueRedis,
    private readonly reflector: Reflector,
    private readonly registry: TenantQueueRegistry,
  ) {
    this.script = new IdempotencyScript(() => redis.client);
  }

  /** Only a processor marked `@Idempotent`. */
  appliesTo(_definition: unknown, _options: unknown, host: TenantWorkerHost): boolean {
    return this.optionsOf(host) !== null;
  }

  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown> {
    const options = this.optionsOf(context.host);
    if (!options) return next();
    return this.once(context, next, options);
  }

  private async once(
    context: JobRunContext,
    next: () => Promise<unknown>,
    options: NonNullable<ReturnType<IdempotencyStage['optionsOf']>>,
  ): Promise<unknown> {
    const { job, definition } = context;
    const runId = job.runId ?? String(job.id);
    const tenant = context.envelope?.tenantId ?? NO_TENANT;
    const keys = IdempotencyScript.keys(this.markerPrefixOf(definition), tenant, runId);
    const lease = options.lease ?? context.processorOptions.lockDuration ?? DEFAULT_LEASE;
    const token = randomUUID();
    const claim = await this.script.claim(keys, token, lease);
    if (claim.state === 'done') {
      this.logger.log(
        `${tenantLogFields(jobLogRef(job))} job ${job.id} skipped: run ${runId} of ${tenant} already completed`,
      );
      return claim.result;
    }
    if (claim.state === 'busy') {
      // Poll: the holder may finish long before its lease would lapse.
      const wait = Math.min(claim.pttl, BUSY_POLL_MS) + 50;
      await job.moveToDelayed(Date.now() + wait, context.token);
      throw new DelayedError();
    }
    const renew = setInterval(
      () => void this.script.renew(keys[1], token, lease).catch(() => undefined),
      Math.max(Math.floor(lease / 2), 10),
    );
    const stop = () => clearInterval(renew);
    // A timed-out attempt gives the run up, so its retry is not kept waiting for the lease.
    const abandon = () => {
      stop();
      void this.script.release(keys[1], token).catch(() => undefined);
    };
    context.signal?.addEventListener('abort', abandon, { once: true });
    try {
      const result = await next();
      stop();
      await this.script.complete(keys, token, options.ttl ?? DEFAULT_TTL, result);
      return result;
    } catch (error) {
      stop();
      await this.script.release(keys[1], token).catch(() => undefined);
      throw error;
    } finally {
      stop();
      context.signal?.removeEventListener('abort', abandon);
    }
  }

  /**
   * A run is one run whichever pool serves it: a tenant moved to a dedicated pool (or a replay
   * sent to its current pool) finds the markers its earlier run left in the shared one.
   */
  private markerPrefixOf(definition: TenantQueueDefinition): string {
    let prefix = this.markerPrefixes.get(definition);
    if (prefix === undefined) {
      prefix =
        definition.poolOf === undefined
          ? definition.bullPrefix
          : this.registry.getQueue(definition.poolOf).definition.bullPrefix;
      this.markerPrefixes.set(definition, prefix);
    }
    return prefix;
  }

  private optionsOf(host: TenantWorkerHost): IdempotentOptions | null {
    if (!this.options.has(host)) {
      const found = this.reflector.getAllAndOverride<IdempotentOptions | undefined>(
        IDEMPOTENT_METADATA,
        [host.process, host.constructor],
      );
      this.options.set(host, found ?? null);
    }
    return this.options.get(host)!;
  }
}
