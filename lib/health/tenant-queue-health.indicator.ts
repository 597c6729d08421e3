import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Cluster } from 'ioredis';
import { ScheduleTicker } from '../scheduler';
import { TenantQueueRedis } from '../core/redis/tenant-queue.redis';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';

/**
 * Options of `TenantQueueHealthIndicator.check`.
 * @publicApi
 */
export interface TenantQueueHealthOptions {
  /**
   * How long Redis may take to answer PING (ms).
   * @default 1000
   */
  timeoutMs?: number;
  /**
   * The scheduler is down when its last tick is older than this many tick intervals.
   * @default 5
   */
  missedTicks?: number;
}

/**
 * `@nestjs/terminus` health indicator (optional peer dependency, so it is not in the main
 * barrel: import it from `nestjs-tenant-queue/dist/health`). Up when Redis answers PING, every
 * worker this process started is running or paused by you, and the scheduler ticked recently.
 * A worker is `refused`, and the check down, when Redis refused its commands (`NOPERM`: the
 * connection's ACL user lacks a permission BullMQ needs): the module paused it, and it takes no
 * job until the permission is granted and the process restarts.
 * @publicApi
 */
@Injectable()
export class TenantQueueHealthIndicator {
  private readonly createdAt = Date.now();

  constructor(
    private readonly health: HealthIndicatorService,
    private readonly redis: TenantQueueRedis,
    private readonly registry: TenantQueueRegistry,
    private readonly moduleRef: ModuleRef,
  ) {}

  async check<const Key extends string = 'tenantQueue'>(
    key: Key = 'tenantQueue' as Key,
    options: TenantQueueHealthOptions = {},
  ) {
    const session = this.health.check(key);
    const redis = await this.ping(options.timeoutMs ?? 1000);
    // Keyed by queue name: no inherited members for a name like `constructor`.
    const workers = Object.create(null) as Record<
      string,
      'running' | 'paused' | 'stopped' | 'refused'
    >;
    for (const name of this.registry.getQueueNames()) {
      const worker = this.registry.getWorker(name);
      if (!worker) continue;
      workers[name] = this.registry.isWorkerRefused(name)
        ? 'refused'
        : worker.isPaused()
          ? 'paused'
          : worker.isRunning()
            ? 'running'
            : 'stopped';
    }
    const scheduler = this.scheduler(options.missedTicks ?? 5);
    const up =
      redis === 'up' &&
      Object.values(workers).every((state) => state === 'running' || state === 'paused') &&
      scheduler !== 'stalled';
    const data = { redis, workers, scheduler };
    return up ? session.up(data) : session.down(data);
  }

  private async ping(timeoutMs: number): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
      });
      const reply = await Promise.race([this.pingEveryMaster(), timeout]);
      return reply === 'PONG' ? 'up' : String(reply);
    } catch (error) {
      return (error as Error).message;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * PING of the Redis, or of every master of a Cluster (a Cluster's own PING goes to one master
   * picked at random, so with one silent the check flapped): the first reply that is not PONG.
   */
  private async pingEveryMaster(): Promise<string> {
    const client = this.redis.client;
    const masters = client instanceof Cluster ? client.nodes('master') : [];
    if (masters.length === 0) return client.ping();
    const replies = await Promise.all(masters.map((node) => node.ping()));
    return replies.find((reply) => reply !== 'PONG') ?? 'PONG';
  }

  private scheduler(missedTicks: number): 'ticking' | 'starting' | 'stalled' | 'off' {
    const ticker = this.moduleRef.get(ScheduleTicker, { strict: false });
    if (!ticker?.options.enabled) return 'off';
    const limit = ticker.options.tickInterval * missedTicks;
    const last = ticker.lastTickAt ?? this.createdAt;
    if (Date.now() - last <= Math.max(limit, 1000)) {
      return ticker.lastTickAt === undefined ? 'starting' : 'ticking';
    }
    return 'stalled';
  }
}
