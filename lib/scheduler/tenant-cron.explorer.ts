import { isTenantDirectoryConfigured } from '../core/tenants/default-ports';
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
import { InvalidScheduleError } from './invalid-schedule.error';
import { TenantDirectory } from '../core/types/tenant-directory.interface';
import { TenantWorkerLauncher } from '../core/processor/worker-launcher';
import { TenantWorkerHost } from '../core/processor/tenant-worker-host';
import { Messages } from '../tenant-queue.messages';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { CronFanOutHost } from './cron-fan-out.host';
import { ScheduleStore } from './schedule.store';
import { StoredCronSchedule, StoredTenantSchedule, cronScheduleId } from './stored-schedule';
import { ScheduleTicker } from './schedule-ticker';
import { TENANT_CRON_METADATA, TenantCronMetadata } from './tenant-cron.decorator';
import { TenantCronHandler, TenantCronHost } from './tenant-cron.host';
import { MAX_CATCH_UP, MISSED_POLICIES, SCHEDULE_KEY_PATTERN } from './tenant-schedule.dto';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { jobOptionsProblem } from '../core/queues/job-options.check';
import { tenantCronJobId } from './schedule-job-id';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';

/** A validated `@TenantCron`: every option with a default has its value. */
type Cron = TenantCronMetadata &
  Required<Pick<TenantCronMetadata, 'timezone' | 'missed' | 'maxCatchUp' | 'queue'>>;

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
    @Optional() @Inject(TenantDirectory) private readonly directory?: TenantDirectory,
  ) {}

  private discovered: ReturnType<TenantCronExplorer['discover']> | undefined;

  /**
   * Finds and validates every `@TenantCron` before bootstrap, so a bad declaration fails the app
   * before any worker or Redis connection opens (Nest runs no shutdown hooks for a failed init).
   */
  onModuleInit(): void {
    this.discovered = this.discover();
    const { crons } = this.discovered;
    if (crons.size > 0 && !isTenantDirectoryConfigured(this.directory)) {
      throw new InvalidTenantQueueOptionsError(Messages.cronNeedsDirectory([...crons.keys()][0]));
    }
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
      const next = this.ticker.planner.cronOf(cron.expression, zone).nextAfter(now);
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
    const crons = new Map<string, Cron>();
    const handlers = new Map<string, Map<string, TenantCronHandler>>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance);
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const metadata = this.reflector.get<TenantCronMetadata | undefined>(
          TENANT_CRON_METADATA,
          prototype[method],
        );
        if (!metadata) continue;
        const cron = this.validate(metadata);
        if (crons.has(cron.name)) throw new InvalidScheduleError(Messages.duplicateCron(cron.name));
        crons.set(cron.name, cron);
        const byName = handlers.get(cron.queue) ?? new Map<string, TenantCronHandler>();
        byName.set(cron.name, (run, job) => instance[method](run, job));
        handlers.set(cron.queue, byName);
      }
    }
    return { crons, handlers };
  }

  private validate(metadata: TenantCronMetadata): Cron {
    const field = (name: string, why: string) =>
      new InvalidScheduleError(Messages.invalidSchedule(`@TenantCron.${name}`, why));
    if (typeof metadata.name !== 'string' || !SCHEDULE_KEY_PATTERN.test(metadata.name)) {
      throw field('name', `must match ${SCHEDULE_KEY_PATTERN}`);
    }
    const missed = metadata.missed ?? 'skip';
    if (!MISSED_POLICIES.includes(missed)) throw field('missed', 'must be skip, once or all');
    const maxCatchUp = metadata.maxCatchUp ?? 10;
    if (!Number.isInteger(maxCatchUp) || maxCatchUp < 1 || maxCatchUp > MAX_CATCH_UP) {
      throw field('maxCatchUp', `must be an integer from 1 to ${MAX_CATCH_UP}`);
    }
    const timezone = metadata.timezone ?? 'UTC';
    this.ticker.planner.cronOf(metadata.expression, timezone === 'tenant' ? 'UTC' : timezone);
    // Options every tenant's job would be refused with fail the app now, not each fan-out.
    const opts: unknown = metadata.jobOptions;
    if (opts !== undefined) {
      if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
        throw field('jobOptions', 'must be an object of BullMQ job options');
      }
      if ('parent' in opts && opts.parent !== undefined) {
        throw field('jobOptions.parent', Messages.scheduleJobParent());
      }
      const jobId = tenantCronJobId(metadata.name, 'tenant', 0);
      const payload = JSON.stringify({ occurrence: new Date(0).toISOString() });
      const problem = jobOptionsProblem({ ...opts, jobId }, payload);
      if (problem) throw field(`jobOptions.${problem.option}`, problem.why);
    }
    return {
      ...metadata,
      timezone,
      missed,
      maxCatchUp,
      queue: metadata.queue ?? this.ticker.options.cronQueue,
    };
  }

  /**
   * At bootstrap, writes each driver that is missing, unreadable or changed. Again later (`now`
   * given: the ticker's check), writes only a driver Redis lost, with its next run from `now`: a
   * driver that differs may be a newer version's during a rolling deploy, and stays.
   */
  private async registerDrivers(crons: Map<string, Cron>, again?: number): Promise<void> {
    const now = again ?? (await this.ticker.clock.now());
    const ids = [...crons.keys()].map(cronScheduleId);
    const existing = await this.store.get(ids);
    await Promise.all(
      [...crons.values()].map(async (cron, i) => {
        const schedule: StoredCronSchedule = {
          kind: 'cron',
          name: cron.name,
          cron: cron.expression,
          timezone: cron.timezone,
          enabled: true,
          missed: cron.missed,
          maxCatchUp: cron.maxCatchUp,
        };
        const stored = existing[i];
        if (again !== undefined) {
          if (stored !== undefined && (await this.store.nextRun(ids[i])) !== null) return;
          const next = await this.ticker.planner.nextRunOf(schedule, now);
          await this.store.put(ids[i], schedule, next);
          this.logger.warn(`${tenantLogFields()} ${Messages.cronDriverLost(cron.name, next)}`);
          return;
        }
        if (stored?.kind === 'unreadable') {
          this.logger.warn(
            `${tenantLogFields()} @TenantCron "${cron.name}": the stored driver ${stored.reason}; writing it again`,
          );
        }
        const unchanged = stored?.kind === 'cron' && sameDriver(stored, schedule);
        if (unchanged && (await this.store.nextRun(ids[i])) !== null) return;
        await this.store.put(ids[i], schedule, await this.ticker.planner.nextRunOf(schedule, now));
        this.logger.log(
          `${tenantLogFields()} @TenantCron "${cron.name}" scheduled (${cron.expression}, ${cron.timezone})`,
        );
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
