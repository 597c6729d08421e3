import { Injectable } from '@nestjs/common';
import { TenantContext } from '../../lib';

export interface SentDigest {
  kind: 'nightly' | 'custom';
  /** The occurrence the digest was scheduled for. */
  scheduledFor: string;
}

/** Digests "sent", per tenant (a stand-in for your mailer). */
@Injectable()
export class DigestStore {
  private readonly sent = new Map<string, SentDigest[]>();

  constructor(private readonly tenant: TenantContext) {}

  /** Records a digest for the tenant of the running job. */
  record(digest: SentDigest): void {
    const tenantId = this.tenant.getTenantIdOrThrow();
    this.sent.set(tenantId, [...(this.sent.get(tenantId) ?? []), digest]);
  }

  listForCurrentTenant(): SentDigest[] {
    return this.sent.get(this.tenant.getTenantIdOrThrow()) ?? [];
  }
}
