import { FailedBootCloser } from '../core/processor/failed-boot.closer';
import { TenantQueueRedis } from '../core/redis/tenant-queue.redis';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { TenantDirectory } from '../core/types/tenant-directory.interface';
import { TenantWorkerLauncher } from '../core/processor/worker-launcher';
import { TenantWorkerHost } from '../core/processor/tenant-worker-host';
import { Messages } from '../tenant-queue.messages';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { CronFanOutHost } from './cron-fan-out.host';
import { ScheduleStore } from './schedule.store';
import {
  StoredCronSchedule,
  StoredTenantSchedule,
  cronScheduleId,
  hashSeedOf,
} from './stored-schedule';
import { ScheduleTicker } from './schedule-ticker';
import { TenantCronHost } from './tenant-cron.host';
import { Cron, assertCronDirectory, discoverTenantCrons } from './tenant-cron.check';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';

/** A `@TenantCron` schedule as the dashboard lists it for one tenant. */
export interface TenantCronView {
  name: string;
  cron: string;
  timezone: string;
  /** The IANA zone its times are in (the tenant's own for `timezone: 'tenant'`). */
  zone: string;
  queue: string;
  nextRunAt: string | null;
}

/**
 * Finds every `@TenantCron` method at bootstrap, stores one driver schedule per cron in Redis
 * (kept when unchanged, so runs missed while every instance was down are noticed), starts the
 * fan-out and cron workers, then starts the scheduler's tick.
 */
@Injectable()
export class TenantCronExplorer
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new TenantQueueLogger('TenantScheduler');
  private stopping = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly registry: TenantQueueRegistry,
    private readonly launcher: TenantWorkerLauncher,
    private readonly store: ScheduleStore,
    private readonly ticker: ScheduleTicker,
    private readonly redis: TenantQueueRedis,
    private readonly failedBoot: FailedBootCloser,
    @Optional() @Inject(TenantDirectory) private readonly directory?: TenantDirectory,
  ) {}

  private discovered: ReturnType<TenantCronExplorer['discover']> | undefined;

  /**
   * Finds and validates every `@TenantCron` before bootstrap, so a bad declaration fails the app
   * before any worker or Redis connection opens (Nest runs no shutdown hooks for a failed init).
   */
  onModuleInit(): Promise<void> {
    return this.failedBoot.guard(() => {
      this.discovered = this.discover();
      assertCronDirectory(this.discovered.crons, this.directory);
    });
  }

  /**
   * Stores the drivers, then starts the cron workers and the tick. With Redis away the app
   * finishes bootstrapping all the same: the drivers are written once it answers (the scripts'
   * connection holds the commands until then).
   */
  async onApplicationBootstrap(): Promise<void> {
    const { crons, handlers } = this.discovered ?? this.discover();
    if (crons.size > 0) {
      const registering = this.registerDrivers(crons).catch((error: Error) => {
        if (!this.stopping) {
          this.logger.error(
            `${tenantLogFields()} @TenantCron drivers not stored: ${error.message}`,
          );
        }
      });
      // Stored before the app is up when Redis answers; in the background when it is away.
      if (!(await this.redis.settlesAtBoot(registering))) {
        this.logger.warn(`${tenantLogFields()} ${Messages.cronDriversLater()}`);
      }
      // The check for drivers Redis lost starts once the first write settled: with Redis away
      // at boot, both would run when it answers, and the check, reading before the write
      // landed, wrote each driver again and warned that it was missing.
      void registering.then(() =>
        this.ticker.keepDrivers((now) => this.registerDrivers(crons, now)),
      );
      const fanOut = new CronFanOutHost(crons, this.directory!, this.registry, this.ticker);
      this.startWorker(this.ticker.delivery.fanOutQueueName, fanOut, false, 2);
      for (const [queue, byName] of handlers) {
        this.startWorker(
          queue,
          new TenantCronHost(byName),
          true,
          this.ticker.options.cronConcurrency,
        );
      }
    }
    this.ticker.start();
  }

  beforeApplicationShutdown(): void {
    this.stopping = true;
  }

  /**
   * The `@TenantCron` schedules as one tenant sees them, with its next run: in its own zone (from
   * the directory) for `timezone: 'tenant'`, else in the cron's zone.
   */
  /** The scheduler's own queues (the `@TenantCron` queue and its fan-out queue). */
  internalQueues(): string[] {
    return [this.ticker.options.cronQueue, this.ticker.delivery.fanOutQueueName];
  }

  /** The zone the directory gives the tenant (what `timezone: 'tenant'` runs in). */
  tenantZone(tenantId: string): Promise<string> {
    return this.ticker.planner.zoneOf({ timezone: 'tenant', tenantId } as StoredTenantSchedule);
  }

  async forTenant(tenantId: string): Promise<TenantCronView[]> {
    const crons = [...(this.discovered?.crons.values() ?? [])];
    if (!crons.length) return [];
    const now = await this.ticker.clock.now();
    const own = await this.tenantZone(tenantId);
    return crons.map((cron) => {
      const zone = cron.timezone === 'tenant' ? own : cron.timezone!;
      const next = this.ticker.planner
        .cronOf(cron.expression, zone, hashSeedOf(cron))
        .nextAfter(now);
      return {
        name: cron.name,
        cron: cron.expression,
        timezone: cron.timezone === 'tenant' ? `${zone} (tenant's zone)` : zone,
        zone,
        queue: cron.queue,
        nextRunAt: next === null ? null : new Date(next).toISOString(),
      };
    });
  }

  private discover() {
    return discoverTenantCrons(
      this.discovery,
      this.scanner,
      this.reflector,
      this.ticker.options.cronQueue,
    );
  }

  /**
   * At bootstrap, writes each driver that is missing, unreadable or changed. Again later (`now`
   * given: the ticker's check), writes only a driver Redis lost, with its next run from `now`: a
   * driver that differs may be a newer version's during a rolling deploy, and stays. Each write is
   * a compare-and-set of the driver as read: one another process wrote meanwhile (a newer
   * version's boot), or a run a tick claimed meanwhile, is not written over.
   */
  private async registerDrivers(crons: Map<string, Cron>, again?: number): Promise<void> {
    await Promise.all(
      [...crons.values()].map(async (cron) => {
        const id = cronScheduleId(cron.name);
        const schedule: StoredCronSchedule = {
          kind: 'cron',
          name: cron.name,
          cron: cron.expression,
          timezone: cron.timezone,
          enabled: true,
          missed: cron.missed,
          maxCatchUp: cron.maxCatchUp,
        };
        for (let warned = false; ;) {
          const seen = await this.store.snapshot(id);
          const stored = seen.record;
          if (again !== undefined) {
            if (stored !== undefined && seen.next !== null) return;
            const next = await this.ticker.planner.nextRunOf(schedule, again);
            // Lost again? Written by another process meanwhile: its driver stays.
            if (await this.store.putIf(seen, schedule, next)) {
              this.logger.warn(`${tenantLogFields()} ${Messages.cronDriverLost(cron.name, next)}`);
            }
            return;
          }
          if (stored?.kind === 'unreadable' && !warned) {
            warned = true;
            this.logger.warn(
              `${tenantLogFields()} @TenantCron "${cron.name}": the stored driver ${stored.reason}; writing it again`,
            );
          }
          if (stored?.kind === 'cron' && sameDriver(stored, schedule) && seen.next !== null) return;
          const now = await this.ticker.clock.now();
          const next = await this.ticker.planner.nextRunOf(schedule, now);
          if (await this.store.putIf(seen, schedule, next)) {
            this.logger.log(
              `${tenantLogFields()} @TenantCron "${cron.name}" scheduled (${cron.expression}, ${cron.timezone})`,
            );
            return;
          }
        }
      }),
    );
  }

  /** One worker per pool of the cron queue (a queue without pools is its only pool). */
  private startWorker(name: string, host: TenantWorkerHost, scoped: boolean, concurrency: number) {
    this.registry.createQueue({ name, tenantScoped: scoped });
    const pools = this.registry.poolsToConsume(name);
    for (const pool of pools) {
      if (this.registry.getWorker(pool)) {
        throw new InvalidTenantQueueOptionsError(Messages.cronQueueTaken(pool));
      }
    }
    for (const pool of pools) {
      // The shared pool comes last, so the host's worker is the shared one.
      const { definition } = this.registry.getQueue(pool);
      this.launcher.launch(host, definition, { concurrency });
    }
  }
}

/** Whether a stored driver still matches its `@TenantCron` (kept, so missed runs are noticed). */
function sameDriver(a: StoredCronSchedule, b: StoredCronSchedule): boolean {
  return (
    a.name === b.name &&
    a.cron === b.cron &&
    a.timezone === b.timezone &&
    a.enabled === b.enabled &&
    a.missed === b.missed &&
    a.maxCatchUp === b.maxCatchUp
  );
}
