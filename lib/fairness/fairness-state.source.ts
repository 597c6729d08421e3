import { Injectable } from '@nestjs/common';
import {
  TenantQueueControls,
  TenantQueueLiveState,
  TenantQueueStateSource,
} from '../metrics/tenant-queue-state-source.interface';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { fairnessOf, isFairnessOn } from './fairness-options';
import { TenantFairness } from './tenant-fairness.service';

/**
 * The fair gate as the inspector's source of paused and slow-lane state, and
 * as the dashboard's pause/resume controls, for queues registered with fairness on.
 */
@Injectable()
export class FairnessStateSource implements TenantQueueStateSource, TenantQueueControls {
  constructor(
    private readonly fairness: TenantFairness,
    private readonly registry: TenantQueueRegistry,
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
      gated: state.backlog,
      paused: state.paused,
      slowLane: state.slowLane,
      rateLimited: state.rateLimitedUntil !== null,
    };
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
