import { Injectable } from '@nestjs/common';
import { TenantContext } from '../../lib';

export interface Thumbnail {
  file: string;
  thumbnail: string;
  jobId: string;
  madeAt: string;
}

/**
 * Where the sample keeps finished thumbnails. Reads and writes are keyed by the tenant of the
 * current context, never by anything in the payload, so a job cannot write into another tenant.
 */
@Injectable()
export class ThumbnailStore {
  private readonly byTenant = new Map<string, Thumbnail[]>();

  constructor(private readonly tenant: TenantContext) {}

  save(thumbnail: Thumbnail): void {
    const tenantId = this.tenant.getTenantIdOrThrow();
    const list = this.byTenant.get(tenantId) ?? [];
    list.push(thumbnail);
    this.byTenant.set(tenantId, list);
  }

  listForCurrentTenant(): Thumbnail[] {
    return this.byTenant.get(this.tenant.getTenantIdOrThrow()) ?? [];
  }
}
