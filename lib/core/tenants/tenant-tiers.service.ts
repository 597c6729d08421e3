import { Inject, Injectable, Optional } from '@nestjs/common';
import { tenantLogFields } from '../context/tenant-log-fields';
import { TenantQueueLogger } from '../logging/tenant-queue-logger';
import { isTenantDirectoryConfigured } from './default-ports';
import { TenantDirectory, TenantRecord } from '../types/tenant-directory.interface';
import {
  ResolvedTenantQueueOptions,
  TENANT_QUEUE_MODULE_OPTIONS,
  TENANT_QUEUE_OPTIONS,
} from '../options/core.options';
import { ownRecordWithin, portTimeoutOf } from './directory-lookup';
import { TenantLimits, TenantTierOptions } from '../types/tenant-tier-options.interface';
import { UnknownTierError } from './unknown-tier.error';
import { TENANT_QUEUE_BACKEND, TenantQueueBackend } from '../queues/queue-backend';
import { Messages } from '../../tenant-queue.messages';
import { TierOverrides } from './tier-overrides';
import { TenantEnvelopeCodec } from '../envelope/tenant-envelope.codec';

/**
 * What the module knows about one tenant's tier and overrides, as read from the directory.
 * @publicApi
 */
export interface TenantProfile {
  tenantId: string;
  /** The directory's record; null when the tenant is unknown or no directory is configured. */
  record: TenantRecord | null;
  /** The tenant's tier name: assigned at run time (`TenantTiers.setTier`), else the record's. */
  tier?: string;
  /** The record's own tier when a run-time assignment overrides it (`null`: the record has none). */
  directoryTier?: string | null;
}

const MAX_CACHED = 10_000;
const LIMIT_FIELDS = ['weight', 'maxConcurrency', 'minConcurrency', 'rateLimit', 'lanes'] as const;

/**
 * Tiers and per-tenant overrides in one place. A tenant's limits on a queue come from, in order:
 * run-time overrides (`TenantFairness`), the tenant's own record (`weight`, `maxConcurrency`,
 * `rateLimit`, `lanes`, `pools`), its tier's per-queue entry, its tier, then the queue's defaults.
 * Profiles are cached for `tierCacheMs`; `refresh(tenantId)` applies a directory change at once.
 * @publicApi
 */
@Injectable()
export class TenantTiers {
  private readonly cache = new Map<string, { profile: TenantProfile; at: number }>();
  private readonly listeners = new Set<(tenantId: string) => void>();
  private readonly tiers: Readonly<Record<string, TenantTierOptions>>;
  private readonly cacheMs: number;
  private readonly unknownTiers = new Set<string>();
  /** Tenants whose directory record named another tenant (id -> that id), warned once a change. */
  private readonly recordsOfAnother = new Map<string, string>();
  private readonly logger = new TenantQueueLogger('TenantTiers');

  private readonly overrides: TierOverrides;
  private readonly hasTiers: boolean;
  /** How long a directory lookup may take (see `lookup`). */
  private readonly lookupMs: number;

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS) options: ResolvedTenantQueueOptions,
    @Inject(TENANT_QUEUE_BACKEND) backend: TenantQueueBackend,
    private readonly codec: TenantEnvelopeCodec,
    @Optional() @Inject(TenantDirectory) private readonly directory?: TenantDirectory,
    @Optional()
    @Inject(TENANT_QUEUE_MODULE_OPTIONS)
    given?: { guards?: { portTimeoutMs?: number } },
  ) {
    this.tiers = options.tiers;
    this.cacheMs = options.tierCacheMs;
    // A lookup on the enqueue path must settle before the enqueue's own bound, so that a
    // directory outage reads as one (pool routing refused, hints left out), not as Redis's.
    this.lookupMs = Math.min(portTimeoutOf(given), Math.floor(options.enqueueTimeoutMs / 2));
    this.hasTiers = Object.keys(options.tiers).length > 0;
    this.overrides = new TierOverrides(`${options.prefix}:tiers`, backend.stateClient());
  }

  /** True when tiers or a directory can say anything about a tenant's limits or pool. */
  get configured(): boolean {
    return this.hasTiers || isTenantDirectoryConfigured(this.directory);
  }

  /** The names of the tiers the `tiers` option defines. */
  tierNames(): string[] {
    return Object.keys(this.tiers);
  }

  /**
   * Assigns `tier` to a tenant at run time, over its directory record's `tier` (`null` goes back
   * to the record's). This process applies it at once (`refresh`); the others within
   * `tierCacheMs`. Throws `UnknownTierError` for a tier the `tiers` option does not define, and
   * `InvalidTenantIdError` for a tenant id `tenantIdPattern` refuses (nothing written).
   */
  async setTier(tenantId: string, tier: string | null): Promise<void> {
    this.codec.assertTenantId(tenantId);
    if (tier !== null && (typeof tier !== 'string' || !Object.hasOwn(this.tiers, tier))) {
      throw new UnknownTierError(tier, Messages.unknownTier(tier, this.tierNames()));
    }
    await this.overrides.set(tenantId, tier);
    await this.refresh(tenantId);
  }

  /** The tier options by name (undefined for an unknown tier). */
  tier(name: string | undefined): TenantTierOptions | undefined {
    return name === undefined ? undefined : this.tiers[name];
  }

  /**
   * The tenant's record and tier, from cache or the directory. Throws when the directory does,
   * and `TenantPortUnavailableError` when it does not answer within `guards.portTimeoutMs` (at
   * most half of `enqueueTimeoutMs`).
   */
  async profile(tenantId: string): Promise<TenantProfile> {
    const cached = this.cache.get(tenantId);
    if (cached && Date.now() - cached.at < this.cacheMs) return cached.profile;
    const [record, assigned] = await Promise.all([
      isTenantDirectoryConfigured(this.directory)
        ? ownRecordWithin(this.directory!, tenantId, this.lookupMs, (other) =>
            this.warnRecordOfAnother(tenantId, other),
          )
        : null,
      this.hasTiers ? this.overrides.get(tenantId) : undefined,
    ]);
    const recorded = typeof record?.tier === 'string' ? record.tier : undefined;
    const tier = assigned ?? recorded;
    if (tier !== undefined && !this.tiers[tier] && !this.unknownTiers.has(tier)) {
      this.unknownTiers.add(tier);
      this.logger.warn(
        `${tenantLogFields({ tenantId })} Tenant "${tenantId}" has tier "${tier}", which the "tiers" option does not define: ` +
          `its limits fall back to its own record and the queue defaults. Add "${tier}" to tiers.`,
      );
    }
    const profile: TenantProfile =
      assigned === undefined
        ? { tenantId, record, tier }
        : { tenantId, record, tier, directoryTier: recorded ?? null };
    if (this.cacheMs > 0) {
      if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
      this.cache.delete(tenantId);
      this.cache.set(tenantId, { profile, at: Date.now() });
    }
    return profile;
  }

  private warnRecordOfAnother(tenantId: string, other: unknown): void {
    const otherId = String(other);
    if (this.recordsOfAnother.get(tenantId) === otherId) return;
    if (this.recordsOfAnother.size >= MAX_CACHED) this.recordsOfAnother.clear();
    this.recordsOfAnother.set(tenantId, otherId);
    this.logger.warn(
      `${tenantLogFields({ tenantId })} ${Messages.tenantRecordOfAnotherIgnored(tenantId, other, 'its tier, limits and pool are not read from it')}`,
    );
  }

  /** The tenant's limits on `queue` (record over tier's queue entry over tier); `{}` when none. */
  limits(profile: TenantProfile, queue: string): TenantLimits {
    const tier = this.tier(profile.tier);
    const out: TenantLimits = {};
    const layers = [tier, own(tier?.queues, queue), profile.record as TenantLimits | null];
    for (const layer of layers) {
      if (!layer) continue;
      for (const field of LIMIT_FIELDS) {
        if (layer[field] !== undefined) (out as Record<string, unknown>)[field] = layer[field];
      }
    }
    return out;
  }

  /** The dedicated pool of `queue` for this tenant (record's `pools`, then its tier's), if any. */
  pool(profile: TenantProfile, queue: string): string | undefined {
    const mine = own(profile.record?.pools as Record<string, string> | undefined, queue);
    return mine ?? own(this.tier(profile.tier)?.pools, queue);
  }

  /** Limits of several tenants on one queue; a tenant whose lookup fails is left out. */
  async limitsFor(tenantIds: string[], queue: string): Promise<Map<string, TenantLimits>> {
    const out = new Map<string, TenantLimits>();
    await Promise.all(
      tenantIds.map(async (tenantId) => {
        try {
          out.set(tenantId, this.limits(await this.profile(tenantId), queue));
        } catch {
          // The directory is down: keep whatever Redis holds for this tenant.
        }
      }),
    );
    return out;
  }

  /**
   * Forgets the cached profile and tells the fair gates and routers, so a tier change (or any
   * override in the directory) takes effect now instead of after `tierCacheMs`.
   */
  async refresh(tenantId: string): Promise<void> {
    this.cache.delete(tenantId);
    await Promise.all([...this.listeners].map((listener) => listener(tenantId)));
  }

  /** @internal Called with a tenant id whenever `refresh` runs. */
  onRefresh(listener: (tenantId: string) => void | Promise<void>): () => void {
    this.listeners.add(listener as (tenantId: string) => void);
    return () => this.listeners.delete(listener as (tenantId: string) => void);
  }
}

/** `map[key]` when `map` has it as its own property (never `Object.prototype`'s). */
function own<T>(map: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}
