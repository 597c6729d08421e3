import { Inject, Injectable, Optional } from '@nestjs/common';
import { DeadLettersScript } from '../dead-letters';
import { TenantEnvelopeCodec } from '../core/envelope/tenant-envelope.codec';
import { TenantQueueRedis } from '../core/redis/tenant-queue.redis';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { InvalidJobIdError } from '../core/errors';
import { isJobIdLookup } from '../core/queues/job-id.check';
import { Messages } from '../tenant-queue.messages';
import { explainJob } from './job-explain';
import { JobExplanation } from './job-explanation.interface';
import { TenantQueueSummary } from './queue-summary.interface';
import { summarizeQueue } from './queue-summary';
import { TenantLagHistory, readLagHistory } from './lag-history';
import { nthLatestAge, windowFigures } from './window-figures';
import { ResolvedMetricsOptions, TENANT_QUEUE_METRICS_OPTIONS } from './metrics.options';
import { TenantQueueStateSource } from './tenant-queue-state-source.interface';
import { TenantCount, TenantListQuery, TenantQueueStats } from './tenant-queue-stats.interface';
import { BullCounts, countBullJobs, reconcileBacklog } from './visibility-count.script';
import { NO_TENANT, VisibilityKeys } from './visibility-keys';

/**
 * Per-tenant figures of each queue: backlog, in-flight, oldest waiting age, lag percentiles,
 * failures, dead letters, paused and slow-lane state. Everything is read from Redis, so any
 * process answers for the whole cluster: backlog and in-flight from BullMQ's and the fair
 * gate's own state at the time of the call; lag and results from counters each process writes
 * every flush interval.
 * @publicApi
 */
@Injectable()
export class TenantQueueInspector {
  constructor(
    private readonly redis: TenantQueueRedis,
    private readonly registry: TenantQueueRegistry,
    private readonly codec: TenantEnvelopeCodec,
    @Inject(TENANT_QUEUE_METRICS_OPTIONS) private readonly options: ResolvedMetricsOptions,
    @Optional()
    @Inject(TenantQueueStateSource)
    private readonly stateSource?: TenantQueueStateSource,
  ) {}

  /** One tenant on one queue. */
  async getTenant(queue: string, tenantId: string): Promise<TenantQueueStats> {
    this.codec.assertTenantId(tenantId);
    const keys = new VisibilityKeys(this.registry.getQueue(queue).definition);
    const [now, bull] = await Promise.all([
      this.redisTime(),
      countBullJobs(this.redis.client, keys, this.countsTurns(queue)),
    ]);
    return this.read(keys, tenantId, now, bull);
  }

  /**
   * Per queue, up to `limit` tenants: the most recently active, and those whose jobs have waited
   * longest (in BullMQ, or held by a fair gate) though nothing happened for them lately; the
   * largest `currentLagMs` first.
   */
  async listTenants(query: TenantListQuery = {}): Promise<TenantQueueStats[]> {
    const limit = Math.min(1000, Math.max(1, Math.floor(query.limit ?? 100)));
    const names = query.queue === undefined ? this.registry.getQueueNames() : [query.queue];
    const now = await this.redisTime();
    const all: TenantQueueStats[] = [];
    for (const name of names) all.push(...(await this.readQueue(name, limit, now)));
    return all.sort(byLag);
  }

  /**
   * @internal Backlog and in-flight of every tenant of one queue, `pageSize` at a time, counted
   * as `getTenant` counts them, for figures that need only those two (the gauges, bull-board's
   * "waiting to start"): BullMQ's jobs counted once for the whole queue and, per page, one read
   * of the gate's backlogs (a fair queue) or of the enqueue counters (a plain one), instead of
   * each tenant's full stats. A state source without `gatedCounts` is read tenant by tenant.
   */
  async forEachTenantCount(
    queue: string,
    visit: (page: TenantCount[]) => void,
    pageSize = 1000,
  ): Promise<void> {
    const keys = new VisibilityKeys(this.registry.getQueue(queue).definition);
    const [all, bull, now] = await Promise.all([
      this.redis.client.zrange(keys.tenants, '0', '-1'),
      countBullJobs(this.redis.client, keys, this.countsTurns(queue)),
      this.redisTime(),
    ]);
    const tenants = all.filter((t) => t !== NO_TENANT);
    const source = this.stateSource?.handles(queue) ? this.stateSource : undefined;
    for (let at = 0; at < tenants.length; at += pageSize) {
      const page = tenants.slice(at, at + pageSize);
      visit(await this.countPage(keys, page, now, bull, source));
    }
  }

  /** Whether the queue's state source counts its jobs waiting their turn (see countsTurns). */
  private countsTurns(queue: string): boolean {
    return (this.stateSource?.handles(queue) && this.stateSource.countsTurns?.(queue)) ?? false;
  }

  private async countPage(
    keys: VisibilityKeys,
    page: string[],
    now: number,
    bull: BullCounts,
    source: TenantQueueStateSource | undefined,
  ): Promise<TenantCount[]> {
    const queue = keys.definition.name;
    if (source && !source.gatedCounts) {
      return (await Promise.all(page.map((t) => this.read(keys, t, now, bull)))).map((s) => ({
        tenantId: s.tenantId,
        backlog: s.backlog,
        inFlight: s.inFlight,
      }));
    }
    const gated = source ? await source.gatedCounts!(queue, page) : undefined;
    const unread = gated || page.length === 0;
    const [totals, views] = unread
      ? [[], []]
      : await Promise.all([
          this.redis.client.hmget(
            keys.totals,
            ...page.flatMap((t) => [`${t}|enq`, `${t}|started`]),
          ),
          bull.complete ? this.redis.client.hmget(keys.reconcile, ...page) : [],
        ]);
    const counts: TenantCount[] = [];
    const settled: string[] = [];
    for (const [i, tenantId] of page.entries()) {
      const jobs = bull.of(tenantId);
      const inBull = jobs.waiting + jobs.delayed;
      // As `read`: a fair queue adds what waits in its gate; a plain one counted whole
      // reconciles its counters, one too long to count falls back to them.
      let counted = inBull;
      if (gated) counted = gated[i] + inBull;
      else if (bull.complete) {
        const mine = totals.slice(2 * i, 2 * i + 2);
        if (views[i] && agrees(mine, inBull)) settled.push(tenantId);
        else await this.reconcile(keys, tenantId, inBull, now, mine);
      } else
        counted = Math.max(inBull, Number(totals[2 * i] ?? 0) - Number(totals[2 * i + 1] ?? 0));
      counts.push({ tenantId, backlog: counted, inFlight: jobs.running + jobs.retrying });
    }
    // A view the reconcile left while the counters disagreed for a moment (one process's counts
    // flushed before another's) is never read back once they agree: dropped here, so the hash
    // holds only the tenants whose counters disagree now.
    if (settled.length > 0) await this.redis.client.hdel(keys.reconcile, ...settled).catch(() => 0);
    return counts;
  }

  /**
   * Up to `limit` tenants of one queue, the largest `currentLagMs` first, picked from three
   * reads: the `limit` most recently active (enqueue, start or result), the tenants of the
   * longest-waiting jobs BullMQ holds (the count reads the oldest end of its lists) and, on a fair
   * queue, the tenants whose jobs the gate holds longest. A tenant whose jobs wait while nothing
   * happens for it (paused, at its cap, behind a flood) is no recent activity, but it is the
   * one an operator looks for.
   */
  private async readQueue(name: string, limit: number, now: number): Promise<TenantQueueStats[]> {
    const keys = new VisibilityKeys(this.registry.getQueue(name).definition);
    const source = this.stateSource?.handles(name) ? this.stateSource : undefined;
    const [active, bull, held] = await Promise.all([
      this.redis.client.zrevrange(keys.tenants, 0, limit - 1),
      countBullJobs(this.redis.client, keys, this.countsTurns(name)),
      source?.heldTenants ? source.heldTenants(name, limit) : [],
    ]);
    const waiting = [...bull.tenants]
      .filter(([, jobs]) => jobs.oldestDueAt === jobs.oldestDueAt)
      .sort(([, a], [, b]) => a.oldestDueAt - b.oldestDueAt)
      .slice(0, limit)
      .map(([tenantId]) => tenantId);
    const tenants = new Set([...active, ...waiting, ...held]);
    tenants.delete(NO_TENANT);
    const stats = await Promise.all([...tenants].map((t) => this.read(keys, t, now, bull)));
    return stats.sort(byLag).slice(0, limit);
  }

  /**
   * Why is this job still waiting? Its place in its tenant's backlog in the fair gate, its
   * tenant's place in the turn order and what holds it (paused, cap reached, rate-limited until,
   * slow lane, lane share, window full), or where BullMQ has it (waiting with or without a worker
   * anywhere, active, delayed until, completed, failed), or `unknown`. Read only. Throws
   * `UnknownTenantQueueError` for a queue no `registerQueue` declared.
   */
  async explain(queue: string, jobId: string): Promise<JobExplanation> {
    this.registry.getQueue(queue);
    if (!isJobIdLookup(jobId)) {
      throw new InvalidJobIdError(Messages.invalidJobId(jobId));
    }
    return explainJob(this.redis.client, this.codec, this.registry, this.stateSource, queue, jobId);
  }

  /**
   * @internal The tenant a worker would run `job` as (its envelope opened and, with signing on,
   * verified), or undefined: the one tenant the dashboard shows or acts on a BullMQ job for.
   */
  tenantOfJob(job: { tenant?: unknown; data?: unknown }): string | undefined {
    return this.codec.envelopeOf(job)?.tenantId;
  }

  /**
   * One queue's workers across all processes, whether it has producers here but no consumer
   * anywhere (`noConsumer`), and its job counts by BullMQ state.
   */
  async getQueue(queue: string): Promise<TenantQueueSummary> {
    this.registry.getQueue(queue);
    return summarizeQueue(this.registry, queue, this.stateSource?.handles(queue) ?? false);
  }

  /** `getQueue` of every registered queue and pool. */
  listQueues(): Promise<TenantQueueSummary[]> {
    return Promise.all(this.registry.getQueueNames().map((name) => this.getQueue(name)));
  }

  /**
   * The last hour of one tenant on one queue, minute by minute: lag p50/p95/p99 of the jobs
   * first started in each minute and the attempts that ended in it, from the counters each
   * process flushes (nothing is written per job).
   */
  async history(queue: string, tenantId: string): Promise<TenantLagHistory> {
    this.codec.assertTenantId(tenantId);
    const keys = new VisibilityKeys(this.registry.getQueue(queue).definition);
    return readLagHistory(this.redis.client, keys, tenantId, await this.redisTime());
  }

  /** Queue names the inspector can read. */
  queueNames(): string[] {
    return this.registry.getQueueNames();
  }

  /**
   * Backlog and in-flight from the truth, on demand: BullMQ's own lists (counted per tenant)
   * and, on a fair queue, the gate's backlog. Only a plain queue too long to count falls back
   * to the counters, which the reconcile keeps honest.
   */
  private async read(
    keys: VisibilityKeys,
    tenantId: string,
    now: number,
    bull: BullCounts,
  ): Promise<TenantQueueStats> {
    const queue = keys.definition.name;
    const window = this.options.windowMinutes;
    const current = Math.floor(now / 60_000);
    const minuteKeys = Array.from({ length: window }, (_, i) => keys.minute(tenantId, current - i));
    const pipe = this.redis.client.pipeline();
    pipe.hmget(keys.totals, `${tenantId}|enq`, `${tenantId}|started`);
    pipe.zcard(DeadLettersScript.tenantKeys(keys.definition, tenantId)[0]);
    for (const key of minuteKeys) pipe.hgetall(key);
    const replies = ((await pipe.exec()) ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const [totals, deadLetters, ...minutes] = replies as [
      (string | null)[],
      number,
      ...Record<string, string>[],
    ];
    const fair = this.stateSource?.handles(queue) ?? false;
    const live = fair ? await this.stateSource!.getTenant(queue, tenantId) : undefined;
    const jobs = bull.of(tenantId);
    const gated = live?.gated ?? 0;
    const inBull = jobs.waiting + jobs.delayed;
    let counted = inBull;
    if (!fair && bull.complete) {
      await this.reconcile(keys, tenantId, inBull, now, totals);
    } else if (!fair) {
      counted = Math.max(inBull, Number(totals[0] ?? 0) - Number(totals[1] ?? 0));
    }
    const backlog = live?.backlog ?? gated + counted;
    const inFlight = live?.inFlight ?? jobs.running + jobs.retrying;
    let oldest = jobs.oldestDueAt === jobs.oldestDueAt ? Math.max(0, now - jobs.oldestDueAt) : 0;
    // The gate knows when its oldest job was enqueued (no window bounds it, and a job the
    // counts have not flushed yet reads its own age).
    const since = live?.gatedSince;
    if (since !== undefined && since !== null) oldest = Math.max(oldest, now - since);
    // Waiting jobs BullMQ does not hold (in a gate that says nothing of their age) or that were
    // not read: under per-tenant FIFO the oldest is the backlog-th latest enqueue, found in the
    // per-second counts.
    const unseen = (since === undefined ? gated : 0) + counted - inBull;
    if (unseen > 0)
      oldest = Math.max(oldest, nthLatestAge(minutes, current, jobs.waiting + unseen, now));
    const { lag, results } = windowFigures(minutes, window);
    return {
      queue,
      tenantId,
      backlog,
      inFlight,
      oldestWaitingMs: oldest,
      lag,
      currentLagMs: Math.max(oldest, lag.p95 ?? 0),
      results,
      deadLetters,
      paused: live?.paused ?? false,
      pausedAt: live?.pausedAt ?? null,
      slowLane: live?.slowLane ?? false,
      rateLimited: live?.rateLimited ?? false,
      rateLimitedUntil: live?.rateLimitedUntil ?? null,
      source: fair ? 'fair-gate' : 'counters',
    };
  }

  /** Corrects counters a killed process left wrong, once BullMQ's count shows it for sure. */
  private async reconcile(
    keys: VisibilityKeys,
    tenantId: string,
    truth: number,
    now: number,
    totals: (string | null)[],
  ): Promise<void> {
    if (agrees(totals, truth)) return;
    const settleMs = this.options.flushIntervalMs * 3 + 2000;
    try {
      await reconcileBacklog(this.redis.client, keys, tenantId, truth, now, settleMs);
    } catch {
      // A read never fails for its upkeep; the next read tries again.
    }
  }

  private async redisTime(): Promise<number> {
    const [seconds, micros] = await this.redis.client.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }
}

/** The largest current lag first, then by tenant id. */
function byLag(a: TenantQueueStats, b: TenantQueueStats): number {
  return b.currentLagMs - a.currentLagMs || a.tenantId.localeCompare(b.tenantId);
}

/** Whether a tenant's counters (`|enq`, `|started`) give the backlog BullMQ holds. */
function agrees(totals: (string | null)[], truth: number): boolean {
  return Number(totals[0] ?? 0) - Number(totals[1] ?? 0) === truth;
}
