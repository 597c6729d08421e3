import { Inject, Injectable, Logger, Scope } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import { TenantRequestPayload } from '../../lib';

/**
 * A per-tenant storage client (here only its config). Durable: with `TenantContextIdStrategy`
 * applied (sample-app/main.ts) it is built once per tenant and shared by that tenant's HTTP
 * requests and jobs. It keeps only what belongs to its tenant, never a request.
 */
@Injectable({ scope: Scope.REQUEST, durable: true })
export class TenantStorage {
  readonly instanceId = randomUUID().slice(0, 8);
  readonly builtAt = new Date().toISOString();
  readonly tenantId: string | undefined;
  readonly bucket: string;

  constructor(@Inject(REQUEST) { tenantId }: TenantRequestPayload) {
    this.tenantId = tenantId;
    // A real app would read the tenant's storage settings here (once per tenant).
    this.bucket = `archives-${tenantId ?? 'untenanted'}`;
    new Logger('ProvidersDemo').log(`storage client ${this.instanceId} built for ${this.bucket}`);
  }
}
