import { isTenantDirectoryConfigured } from '../core/tenants/default-ports';
import { isRecordOfAnother } from '../core/tenants/directory-lookup';
import { Inject, Injectable } from '@nestjs/common';
import { CancelReason } from '../core/errors';
import { TenantDirectory, TenantRecord } from '../core/types/tenant-directory.interface';
import { Messages } from '../tenant-queue.messages';
import { ResolvedGuardOptions, TENANT_GUARD_OPTIONS } from './tenant-guard.options';
import { callPort } from './call-port';

/** What the directory says about one tenant, right now. */
export type TenantVerdict =
  | { allowed: true; tenant: TenantRecord }
  | { allowed: false; reason: CancelReason; message: string };

const MAX_CACHED_TENANTS = 10_000;

/**
 * @internal Asks the `TenantDirectory` whether a tenant is active, for the job guards and
 * `TenantRequiredGuard` alike. A throw or timeout surfaces as `TenantPortUnavailableError`.
 */
@Injectable()
export class TenantStatusService {
  private readonly cache = new Map<string, { until: number; record: TenantRecord | null }>();
  /** The directory lookup under way per tenant, while the cache is on. */
  private readonly asking = new Map<string, Promise<TenantRecord | null>>();

  constructor(
    @Inject(TenantDirectory) private readonly directory: TenantDirectory,
    @Inject(TENANT_GUARD_OPTIONS) private readonly guardOptions: ResolvedGuardOptions,
  ) {}

  /** False with the permissive default directory, which never refuses a well-formed tenant. */
  get canRefuse(): boolean {
    return isTenantDirectoryConfigured(this.directory);
  }

  async check(tenantId: string): Promise<TenantVerdict> {
    return this.verdictOf(tenantId, await this.lookup(tenantId));
  }

  /** `check`'s verdict on a record `lookup` gave (`DeadLetters.replay` words its own refusal). */
  verdictOf(tenantId: string, record: TenantRecord | null): TenantVerdict {
    if (record === null || record === undefined) {
      return {
        allowed: false,
        reason: 'TENANT_UNKNOWN',
        message: Messages.tenantNotActive(tenantId, 'unknown'),
      };
    }
    if (isRecordOfAnother(tenantId, record)) {
      // Fail closed: another tenant's status says nothing about this one.
      return {
        allowed: false,
        reason: 'TENANT_UNKNOWN',
        message: Messages.tenantRecordOfAnother(tenantId, record.id),
      };
    }
    switch (record.status) {
      case 'active':
        return { allowed: true, tenant: record };
      case 'suspended':
        return {
          allowed: false,
          reason: 'TENANT_SUSPENDED',
          message: Messages.tenantNotActive(tenantId, 'suspended'),
        };
      case 'deleted':
        return {
          allowed: false,
          reason: 'TENANT_DELETED',
          message: Messages.tenantNotActive(tenantId, 'deleted'),
        };
      default:
        // Fail closed: a status nobody understands must not run work.
        return {
          allowed: false,
          reason: 'TENANT_UNKNOWN',
          message: Messages.tenantStatusUnrecognised(tenantId, record.status),
        };
    }
  }

  /**
   * The directory's record of a tenant (`null`: unknown), with `check`'s deadline and cache: a
   * throw or timeout is `TenantPortUnavailableError`. `DeadLetters.replay` asks it too.
   */
  async lookup(tenantId: string): Promise<TenantRecord | null> {
    const ttl = this.guardOptions.tenantCacheTtlMs;
    if (ttl <= 0) return this.ask(tenantId);
    const now = Date.now();
    const hit = this.cache.get(tenantId);
    if (hit && hit.until > now) return hit.record;
    // One question per tenant at a time: the jobs that miss together share its answer, rather
    // than each asking the directory the cache is there to spare.
    let pending = this.asking.get(tenantId);
    if (pending === undefined) {
      pending = this.askAndKeep(tenantId, now, ttl);
      this.asking.set(tenantId, pending);
    }
    return pending;
  }

  private async askAndKeep(tenantId: string, now: number, ttl: number) {
    try {
      const record = await this.ask(tenantId);
      this.cache.delete(tenantId);
      if (this.cache.size >= MAX_CACHED_TENANTS) {
        this.cache.delete(this.cache.keys().next().value as string);
      }
      this.cache.set(tenantId, { until: now + ttl, record });
      return record;
    } finally {
      this.asking.delete(tenantId);
    }
  }

  private ask(tenantId: string): Promise<TenantRecord | null> {
    return callPort('TenantDirectory', this.guardOptions.portTimeoutMs, () =>
      this.directory.getTenant(tenantId),
    );
  }
}
