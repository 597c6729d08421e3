import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { BULL_BOARD_INSTANCE } from '@bull-board/nestjs';
import { fairConfigOf, fairnessOf, isFairnessOn } from '../fairness';
import { TenantQueueInspector } from '../metrics';
import type { TenantQueue } from '../core/queues/tenant-queue';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { BullBoardQueueAdapter, TenantBullBoardOptions } from './tenant-bull-board.options';

/** @internal */
export const TENANT_BULL_BOARD_OPTIONS = Symbol('TENANT_BULL_BOARD_OPTIONS');

interface BullBoardInstance {
  addQueue(adapter: BullBoardQueueAdapter): void;
}

/**
 * Adds the module's BullMQ queues (and pools) to the app's bull-board. A fair queue's
 * description says where its waiting jobs are in BullMQ's lists, how many wait to start across
 * tenants, and where the per-tenant view is.
 */
@Injectable()
export class TenantBullBoardRegistrar implements OnModuleInit {
  constructor(
    @Inject(TENANT_BULL_BOARD_OPTIONS) private readonly options: TenantBullBoardOptions,
    @Inject(BULL_BOARD_INSTANCE) private readonly board: BullBoardInstance,
    private readonly registry: TenantQueueRegistry,
    @Optional() private readonly inspector?: TenantQueueInspector,
  ) {}

  onModuleInit(): void {
    for (const name of this.options.queues ?? this.registry.getQueueNames()) {
      const queue = this.registry.getQueue(name);
      const adapter = new this.options.adapter(queue.bullQueue, {
        description: this.describe(queue),
        ...this.options.adapterOptions,
      });
      if (isFairnessOn(fairnessOf(queue.definition)) && this.inspector)
        this.showGate(queue, adapter);
      this.board.addQueue(adapter);
    }
  }

  private describe(queue: TenantQueue<any>): string {
    const pool = queue.definition.poolOf;
    const base = pool ? `Dedicated pool of "${pool}".` : `Tenant queue "${queue.name}".`;
    if (!isFairnessOn(fairnessOf(queue.definition))) return base;
    const where = this.options.dashboardPath
      ? ` Per tenant: /${this.options.dashboardPath.replace(/^\/+/, '')}`
      : '';
    // Where the queue takes turns at add, only a job a rule holds waits in the gate; else every
    // job does until its turn (fair-queue-config.ts).
    const waits = fairConfigOf(queue.definition)?.turnsAtAdd
      ? 'prioritized, or delayed (due 2039) while the fair gate holds it (a rule of its ' +
        "tenant's: pause, cap, rate limit, floor, slow lane; or a priority of its own)"
      : 'delayed (due 2039), held by the fair gate, then waiting or prioritized once admitted';
    return (
      `${base} Fair queue: a job waiting for its turn is ${waits}. Promote and retry run a job ` +
      `outside its turn, past its tenant's cap and pause.${where}`
    );
  }

  /** Keeps the description's gate figure fresh, read when bull-board refreshes the counts. */
  private showGate(queue: TenantQueue<any>, adapter: BullBoardQueueAdapter): void {
    const every = this.options.backlogRefreshMs ?? 5000;
    const base = adapter.getDescription();
    const counts = adapter.getJobCounts.bind(adapter);
    let waiting: number | undefined;
    let readAt = -Infinity;
    adapter.getDescription = () =>
      waiting === undefined ? base : `${base} Waiting to start, all tenants: ${waiting}.`;
    adapter.getJobCounts = async () => {
      if (Date.now() - readAt >= every) {
        readAt = Date.now();
        // Every tenant, a page at a time (listTenants stops at 1,000).
        let sum = 0;
        await this.inspector!.forEachTenantCount(queue.name, (page) => {
          for (const tenant of page) sum += tenant.backlog;
        });
        waiting = sum;
      }
      return counts();
    };
  }
}
