import { Injectable } from '@nestjs/common';
import {
  TenantQueueControls,
  TenantQueueLiveState,
  TenantQueueStateSource,
} from '../metrics/tenant-queue-state-source.interface';
import { TenantQueueRegistry } from '../tenant-queue.registry';
import { isFairnessOn } from './fairness-options';
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
   * Paused, slow-lane and rate-limited state only: the inspector's own counters already measure backlog and
   * in-flight from enqueue to start to finish, which on a fair queue spans the gate and BullMQ's
   * window (the gate's own figures split those two differently).
   */
  async getTenant(queue: string, tenantId: string): Promise<Partial<TenantQueueLiveState>> {
    const state = await this.fairness.getTenant(queue, tenantId);
    return {
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
    return isFairnessOn(this.registry.getQueue(queue).definition.fairness);
  }
}
