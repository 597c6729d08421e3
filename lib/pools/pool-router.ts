import { PoolRoutingUnavailableError } from './pool-routing-unavailable.error';
import { UnknownPoolError } from './unknown-pool.error';
import { TenantPoolRouting } from './pool-queue-options.interface';
import { PreparedJob } from '../core/queues/job-dispatcher.interface';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';
import { Messages } from '../tenant-queue.messages';
import { TenantProfile, TenantTiers } from '../core/tenants/tenant-tiers.service';
import { PoolIdLedger } from './pool-ids.script';

const MAX_REMEMBERED = 10_000;

/**
 * @internal Picks the pool of each job of a pooled queue at enqueue time: the queue's `routing`
 * (static map, then function), then the tenant record's and tier's `pools`, else the shared pool
 * (the queue itself). Jobs without a tenant always use the shared pool.
 */
export class PoolRouter {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  /** Last pool of each tenant routed by this process: the fallback while the directory is down. */
  private readonly lastPool = new Map<string, string>();
  private readonly staticMap: Record<string, string> | undefined;
  private readonly routeFn: ((tenant: TenantProfile) => unknown) | undefined;

  constructor(
    private readonly queue: string,
    private readonly pools: ReadonlySet<string>,
    routing: TenantPoolRouting | undefined,
    private readonly tiers: TenantTiers,
    private readonly ids: PoolIdLedger | undefined,
  ) {
    this.staticMap = typeof routing === 'object' ? routing : undefined;
    this.routeFn = typeof routing === 'function' ? routing : undefined;
  }

  /**
   * The pool of each job, in order. Jobs whose id the caller chose (`ownIds`) keep the pool their
   * id first went to (see `PoolIdLedger`), so a repeat after a move is still deduplicated.
   */
  async route(jobs: PreparedJob[], ownIds: ReadonlySet<string>): Promise<string[]> {
    const byTenant = new Map<string, Promise<string>>();
    const poolOf = (tenantId: string) => {
      let pool = byTenant.get(tenantId);
      if (!pool) byTenant.set(tenantId, (pool = this.poolOf(tenantId)));
      return pool;
    };
    const pools = await Promise.all(
      jobs.map((job) => (job.tenantId === undefined ? this.queue : poolOf(job.tenantId))),
    );
    const own = jobs.flatMap((job, i) => (ownIds.has(job.opts.jobId) ? [i] : []));
    if (own.length > 0 && this.ids) {
      const first = await this.ids.claim(
        own.map((i) => jobs[i].opts.jobId),
        own.map((i) => pools[i]),
        own.map((i) => (jobs[i].tenantId === undefined ? 's' : `t${jobs[i].tenantId}`)),
      );
      // A pool dropped from the config since then no longer has a queue here: route as today.
      own.forEach((i, k) => {
        if (this.isPool(first[k])) pools[i] = first[k];
      });
    }
    return pools;
  }

  /** The pool for one tenant now (static map, function, record, tier, shared). */
  async poolOf(tenantId: string): Promise<string> {
    if (this.staticMap && Object.prototype.hasOwnProperty.call(this.staticMap, tenantId)) {
      return this.checked(tenantId, this.staticMap[tenantId], 'routing map');
    }
    let profile: TenantProfile;
    try {
      profile = await this.tiers.profile(tenantId);
    } catch (error) {
      return this.fallback(tenantId, error);
    }
    let pool: unknown = this.routeFn ? await this.routeFn(profile) : undefined;
    let source = 'routing function';
    if (pool === undefined || pool === null) {
      pool = this.tiers.pool(profile, this.queue);
      source =
        (profile.record?.pools as Record<string, string> | undefined)?.[this.queue] !== undefined
          ? "tenant record's pools"
          : `tier "${profile.tier}"'s pools`;
    }
    const checked = pool === undefined ? this.queue : this.checked(tenantId, pool, source);
    this.remember(tenantId, checked);
    return checked;
  }

  private isPool(pool: unknown): pool is string {
    return pool === this.queue || (typeof pool === 'string' && this.pools.has(pool));
  }

  private checked(tenantId: string, pool: unknown, source: string): string {
    if (this.isPool(pool)) return pool;
    throw new UnknownPoolError(
      this.queue,
      tenantId,
      pool,
      Messages.unknownPool(this.queue, tenantId, pool, source, [...this.pools]),
    );
  }

  private fallback(tenantId: string, error: unknown): string {
    const why = error instanceof Error ? error.message : String(error);
    const last = this.lastPool.get(tenantId);
    if (last === undefined) {
      throw new PoolRoutingUnavailableError(
        this.queue,
        tenantId,
        Messages.poolRoutingUnavailable(this.queue, tenantId, why),
        { cause: error },
      );
    }
    this.logger.warn(
      `${tenantLogFields({ tenantId })} ${Messages.poolDirectoryFallback(this.queue, tenantId, last, why)}`,
    );
    return last;
  }

  private remember(tenantId: string, pool: string): void {
    if (this.lastPool.get(tenantId) === pool) return;
    this.lastPool.delete(tenantId);
    if (this.lastPool.size >= MAX_REMEMBERED) {
      this.lastPool.delete(this.lastPool.keys().next().value!);
    }
    this.lastPool.set(tenantId, pool);
  }
}
