import { Injectable } from '@nestjs/common';
import {
  GateJob,
  GateJobAnswer,
  TenantQueueSettings,
  TenantQueueSettingsChange,
  TenantQueueControls,
  TenantQueueLiveState,
  TenantQueueStateSource,
} from '../metrics';
import { TenantQueueRedis } from '../core/redis/tenant-queue.redis';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { explainGateJob, gatedCounts, heldTenants, listGateJobs } from './fair-explain';
import { FairGateRegistry } from './fair-gate.registry';
import { fairnessOf, isFairnessOn } from './fairness-options';
import {
  TenantFairness,
  checkConcurrency,
  checkRate,
  checkWeight,
} from './tenant-fairness.service';

/**
 * The fair gate as the inspector's source of paused and slow-lane state, and
 * as the dashboard's pause/resume controls, for queues registered with fairness on.
 */
@Injectable()
export class FairnessStateSource implements TenantQueueStateSource, TenantQueueControls {
  constructor(
    private readonly fairness: TenantFairness,
    private readonly registry: TenantQueueRegistry,
    private readonly gates: FairGateRegistry,
    private readonly redis: TenantQueueRedis,
  ) {}

  handles(queue: string): boolean {
    return this.registry.getQueueNames().includes(queue) && this.fairOn(queue);
  }

  /**
   * Paused, slow-lane and rate-limited state, and the jobs waiting in the gate (`gated`): the
   * inspector adds the jobs waiting in BullMQ and counts in-flight from BullMQ's lists (the
   * gate's own in-flight also counts admitted jobs that have not started).
   */
  async getTenant(queue: string, tenantId: string): Promise<Partial<TenantQueueLiveState>> {
    const state = await this.fairness.getTenant(queue, tenantId);
    return {
      gated: state.backlog + state.queuedByTurn,
      gatedSince: state.oldestQueuedAt,
      paused: state.paused,
      pausedAt: state.pausedAt,
      slowLane: state.slowLane,
      rateLimited: state.rateLimitedUntil !== null,
      rateLimitedUntil: state.rateLimitedUntil,
    };
  }

  /** Whether the queue takes turns at add(): `gated` counts the jobs queued by turn too. */
  countsTurns(queue: string): boolean {
    return this.gates.get(queue).turnsAtAdd;
  }

  /** Jobs each tenant has waiting in the gate, one read for the whole list (the gauges). */
  gatedCounts(queue: string, tenantIds: string[]): Promise<number[]> {
    return gatedCounts(this.redis.client, this.gates.get(queue), tenantIds);
  }

  /** Tenants with jobs held in the gate, the longest held first (one bounded read). */
  heldTenants(queue: string, limit: number): Promise<string[]> {
    return heldTenants(this.redis.client, this.gates.get(queue), limit);
  }

  /** The job's place in the queue's gate and what holds it (read only). */
  explainJob(queue: string, jobId: string): Promise<GateJobAnswer | undefined> {
    return explainGateJob(this.redis.client, this.gates.get(queue), jobId);
  }

  gateJobs(queue: string, tenantId: string, limit: number): Promise<GateJob[]> {
    return listGateJobs(this.redis.client, this.gates.get(queue), tenantId, limit);
  }

  async settings(queue: string, tenantId: string): Promise<TenantQueueSettings | undefined> {
    if (!this.handles(queue)) return undefined;
    const state = await this.fairness.getTenant(queue, tenantId);
    return {
      weight: state.weight,
      concurrency: state.concurrency,
      rateLimit: state.rateLimit,
      paused: state.paused,
      slowLane: state.slowLane,
    };
  }

  /** Every value is checked before any is written (a typed error names the bad one). */
  async configure(queue: string, tenantId: string, change: TenantQueueSettingsChange) {
    if (change.weight !== undefined) checkWeight(change.weight);
    if (change.concurrency !== undefined) checkConcurrency(change.concurrency);
    if (change.rateLimit !== undefined) checkRate(change.rateLimit);
    if (change.weight !== undefined) await this.fairness.setWeight(queue, tenantId, change.weight);
    if (change.concurrency !== undefined) {
      await this.fairness.setConcurrency(queue, tenantId, change.concurrency);
    }
    if (change.rateLimit !== undefined) {
      await this.fairness.setRateLimit(queue, tenantId, change.rateLimit);
    }
  }

  pause(queue: string, tenantId: string): Promise<void> {
    return this.fairness.pause(queue, tenantId);
  }

  resume(queue: string, tenantId: string): Promise<void> {
    return this.fairness.resume(queue, tenantId);
  }

  private fairOn(queue: string): boolean {
    return isFairnessOn(fairnessOf(this.registry.getQueue(queue).definition));
  }
}
