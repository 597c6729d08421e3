import { tenantKeyPart } from '../core/context/tenant-key';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { SYSTEM_BUCKET } from '../tenant-queue.constants';

/**
 * The slot of jobs without a tenant (system work): longer than any tenant id, so no tenant a
 * `tenantIdPattern` admits (`-` included) shares its counters or is left out of the lists.
 */
export const NO_TENANT = SYSTEM_BUCKET;

/**
 * Redis keys of the visibility figures of one queue, all under the queue's hash tag
 * (`{<prefix>:<queue>}:vis:...`), so they live in the queue's Redis Cluster slot. Tenant ids
 * in key names go through `tenantKeyPart`. No key holds job ids: only counters.
 */
export class VisibilityKeys {
  private readonly base: string;

  constructor(readonly definition: TenantQueueDefinition) {
    this.base = `${definition.bullPrefix}:vis`;
  }

  /** Sorted set: tenant -> last activity (ms); trimmed to the last day on every flush. */
  get tenants(): string {
    return `${this.base}:tenants`;
  }

  /**
   * Hash: `<tenant>|enq` and `<tenant>|started` since the queue existed (jobs enqueued, first
   * starts): the backlog of a queue too long to count on demand; corrected by the reconcile.
   */
  get totals(): string {
    return `${this.base}:totals`;
  }

  /** Hash: `<tenant>` -> the totals the reconcile saw last (`enq:started:at:truth`). */
  get reconcile(): string {
    return `${this.base}:recon`;
  }

  /**
   * Hash of one tenant-minute: lag bucket counts (`b<i>`), results, and jobs enqueued per
   * second of the minute (`e<s>`, jobs not delayed); expires after the inspector's window.
   */
  minute(tenantId: string, minute: number): string {
    return `${this.base}:m:${tenantKeyPart(tenantId)}:${minute}`;
  }

  /**
   * String: the number of the last flush call of one writer (a process's `QueueVisibility`)
   * that Redis applied, so a call resent after a lost reply adds nothing; expires a day after.
   */
  flushed(writer: string): string {
    return `${this.base}:flushed:${writer}`;
  }

  /** Prefix of BullMQ's keys of this queue (`<prefix>:<queue>:`), for the on-demand count. */
  get bull(): string {
    return `${this.definition.bullPrefix}:${this.definition.name}:`;
  }
}
