import { InMemoryTenantDirectory, TenantDirectory, TenantPage, TenantRecord } from '../../lib';

/**
 * A real `InMemoryTenantDirectory` that can be told to fail (throw) or hang for the next N
 * lookups of a tenant: the outage a job guard must treat as transient.
 */
export class FlakyTenantDirectory implements TenantDirectory {
  readonly calls: string[] = [];
  private readonly throws = new Map<string, number>();
  private readonly hangs = new Map<string, number>();
  private readonly substitutes = new Map<string, string>();

  constructor(readonly inner: InMemoryTenantDirectory) {}

  failNext(tenantId: string, times: number): void {
    this.throws.set(tenantId, times);
  }

  hangNext(tenantId: string, times: number): void {
    this.hangs.set(tenantId, times);
  }

  /** Answers a lookup of `tenantId` with `otherId`'s record (a directory with a bad query). */
  substitute(tenantId: string, otherId: string | undefined): void {
    if (otherId === undefined) this.substitutes.delete(tenantId);
    else this.substitutes.set(tenantId, otherId);
  }

  async getTenant(tenantId: string): Promise<TenantRecord | null> {
    this.calls.push(tenantId);
    const other = this.substitutes.get(tenantId);
    if (other !== undefined) return this.inner.getTenant(other);
    const hang = this.hangs.get(tenantId) ?? 0;
    if (hang > 0) {
      this.hangs.set(tenantId, hang - 1);
      return new Promise<never>(() => undefined);
    }
    const fail = this.throws.get(tenantId) ?? 0;
    if (fail > 0) {
      this.throws.set(tenantId, fail - 1);
      throw new Error('tenant directory is down');
    }
    return this.inner.getTenant(tenantId);
  }

  listActiveTenants(cursor: string | null): Promise<TenantPage> {
    return this.inner.listActiveTenants(cursor);
  }
}
