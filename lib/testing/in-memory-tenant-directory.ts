import {
  TenantDirectory,
  TenantPage,
  TenantRecord,
  TenantStatus,
} from '../core/types/tenant-directory.interface';

/**
 * A `TenantDirectory` kept in memory: for tests, demos and the sample app. Changes take effect on
 * the next job. Pages are ordered by tenant id.
 * @publicApi
 */
export class InMemoryTenantDirectory implements TenantDirectory {
  private readonly tenants = new Map<string, TenantRecord>();

  constructor(
    tenants: (Partial<TenantRecord> & { id: string })[] = [],
    private readonly pageSize = 500,
  ) {
    for (const tenant of tenants) this.upsert(tenant);
  }

  upsert(tenant: Partial<TenantRecord> & { id: string }): TenantRecord {
    const record: TenantRecord = { ...this.tenants.get(tenant.id), status: 'active', ...tenant };
    this.tenants.set(tenant.id, record);
    return record;
  }

  setStatus(tenantId: string, status: TenantStatus): void {
    this.upsert({ id: tenantId, status });
  }

  remove(tenantId: string): void {
    this.tenants.delete(tenantId);
  }

  async getTenant(tenantId: string): Promise<TenantRecord | null> {
    const record = this.tenants.get(tenantId);
    return record ? { ...record } : null;
  }

  async listActiveTenants(cursor: string | null): Promise<TenantPage> {
    const ids = [...this.tenants.keys()].sort();
    const start = cursor === null ? 0 : ids.findIndex((id) => id > cursor);
    const tenants: TenantRecord[] = [];
    let index = start < 0 ? ids.length : start;
    for (; index < ids.length && tenants.length < this.pageSize; index++) {
      const record = this.tenants.get(ids[index])!;
      if (record.status === 'active') tenants.push({ ...record });
    }
    return { tenants, nextCursor: index < ids.length ? ids[index - 1] : null };
  }
}
