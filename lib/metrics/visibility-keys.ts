import { TenantQueueDefinition } from '../interfaces/register-queue-options.interface';

/** A tenant slot for jobs without a tenant (system work). */
export const NO_TENANT = '-';

/**
 * Redis keys of the visibility figures of one queue, all under the queue's hash tag
 * (`{<prefix>:<queue>}:vis:...`), so they live in the queue's Redis Cluster slot.
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

  /** Sorted set: job id -> first start (ms), so a late "enqueued" write skips started jobs. */
  get started(): string {
    return `${this.base}:started`;
  }

  /** Hash: `<tenant>|started` and `<tenant>|done` since the queue existed (in-flight counter). */
  get totals(): string {
    return `${this.base}:totals`;
  }

  /** Sorted set of a tenant's jobs waiting to start: job id -> ready time (ms). */
  pending(tenantId: string): string {
    return `${this.base}:pending:${tenantId}`;
  }

  /** Hash of one tenant-minute: lag bucket counts (`b<i>`) and results; expires. */
  minute(tenantId: string, minute: number): string {
    return `${this.base}:m:${tenantId}:${minute}`;
  }
}
