import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';
import { TenantQueueRedis, settlesWithin } from '../core/redis/tenant-queue.redis';
import { Messages } from '../tenant-queue.messages';
import { ScheduleDelivery } from './schedule-delivery';
import { MissedRuns, PlannedClaim, SchedulePlanner } from './schedule-planner';
import { ScheduleStore } from './schedule.store';
import { SchedulerClock } from './scheduler-clock';
import { StoredSchedule, UnreadableSchedule } from './stored-schedule';
import { SchedulerTickResult } from './tenant-schedule.interface';
import {
  ResolvedTenantSchedulerOptions,
  TENANT_SCHEDULER_OPTIONS,
} from './tenant-scheduler.options';

const MAX_ROUNDS = 50;
/** How often (scheduler clock) a tick first checks that the `@TenantCron` drivers are stored. */
const DRIVER_CHECK_MS = 60_000;

/**
 * @internal One scheduler tick: re-send claims whose claimer crashed, then read the due
 * schedules, plan each one's runs (`SchedulePlanner`), claim them atomically, enqueue
 * (`ScheduleDelivery`), and clear the outbox. Cost grows with the due entries, never with the
 * schedules stored.
 */
@Injectable()
export class ScheduleTicker implements BeforeApplicationShutdown {
  private readonly logger = new TenantQueueLogger('TenantScheduler');
  /** Unreadable records already logged by this process (id -> reason), so a tick does not repeat them. */
  private readonly refused = new Map<string, string>();
  /** Schedules whose runs could not be computed (id -> error), logged once until they can. */
  private readonly unplanned = new Map<string, string>();
  private running: Promise<SchedulerTickResult> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /**
   * Epoch ms at which the last tick of this process succeeded (for health checks: a tick that
   * fails does not count, so a scheduler whose every tick fails shows as stalled).
   */
  lastTickAt: number | undefined;
  /** Ticks failed in a row; the first is logged, the rest are counted until one succeeds. */
  private failedTicks = 0;
  /** The `@TenantCron` drivers' check, and when (scheduler clock) it last ran. */
  private driverCheck: ((now: number) => Promise<void>) | undefined;
  private driverCheckedAt = -Infinity;

  constructor(
    @Inject(TENANT_SCHEDULER_OPTIONS) readonly options: ResolvedTenantSchedulerOptions,
    @Inject(SchedulerClock) readonly clock: SchedulerClock,
    readonly planner: SchedulePlanner,
    readonly delivery: ScheduleDelivery,
    private readonly store: ScheduleStore,
    private readonly redis: TenantQueueRedis,
  ) {}

  /** Starts the automatic tick (unref'd, so it never keeps the process alive). */
  start(): void {
    if (!this.options.enabled || this.timer) return;
    this.timer = setInterval(() => {
      this.tick().then(
        () => {
          if (this.failedTicks === 0) return;
          this.logger.log(`${tenantLogFields()} ${Messages.ticksBack(this.failedTicks)}`);
          this.failedTicks = 0;
        },
        (error: Error) => {
          // Closed under the tick by a boot the module refused: stop, as at shutdown.
          if (this.redis.isClosed) return void this.beforeApplicationShutdown();
          if (this.failedTicks++ > 0) return;
          this.logger.error(`${tenantLogFields()} ${Messages.tickFailed(error.message)}`);
        },
      );
    }, this.options.tickInterval);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    // Within the shutdown bound: a tick waiting for a Redis that is away is left behind.
    if (this.running) await settlesWithin(this.running, this.redis.shutdownMsLeft());
  }

  /** Runs one tick now; a tick already running in this process is joined, not doubled. */
  tick(): Promise<SchedulerTickResult> {
    this.running ??= this.runTick().then(
      (result) => {
        this.running = undefined;
        this.lastTickAt = Date.now();
        return result;
      },
      (error: unknown) => {
        this.running = undefined;
        throw error;
      },
    );
    return this.running;
  }

  /**
   * @internal `check` runs before a tick's reads, at most once a minute of the scheduler's clock:
   * it writes again a `@TenantCron` driver Redis lost (restarted empty, flushed, failed over to
   * an empty replica), which no later tick would see otherwise.
   */
  keepDrivers(check: (now: number) => Promise<void>): void {
    this.driverCheck = check;
  }

  /** Logs an unreadable record once per process and reason; the record itself is not touched. */
  refuse(record: UnreadableSchedule): void {
    if (this.refused.get(record.id) === record.reason) return;
    if (this.refused.size > 5_000) this.refused.clear();
    this.refused.set(record.id, record.reason);
    this.logger.error(
      `${tenantLogFields()} ${Messages.unreadableSchedule(record.id, record.reason)}`,
    );
  }

  private readonly refuseRecord = (record: UnreadableSchedule) => this.refuse(record);

  private async runTick(): Promise<SchedulerTickResult> {
    const result: SchedulerTickResult = {
      due: 0,
      claimed: 0,
      enqueued: 0,
      recovered: 0,
      jobIds: [],
    };
    const now = await this.clock.now();
    if (this.driverCheck && now - this.driverCheckedAt >= DRIVER_CHECK_MS) {
      this.driverCheckedAt = now;
      await this.driverCheck(now).catch((error: Error) =>
        this.logger.warn(`${tenantLogFields()} @TenantCron drivers not checked: ${error.message}`),
      );
    }
    const lease = now + this.options.claimTimeout;
    const stale = await this.store.recover(now, lease, this.options.batchSize);
    if (stale.length > 0) {
      this.logger.warn(
        `${tenantLogFields()} re-sending ${stale.length} claimed occurrence(s) not enqueued within scheduler.claimTimeout (an instance stopped, or their enqueue failed)`,
      );
      result.recovered = stale.length;
      await this.delivery.deliver(stale, result, this.refuseRecord);
    }
    // Logged together at the end of the tick: after a downtime, every tenant's schedule has
    // missed runs, and a line each was thousands of lines at once.
    const missedRuns: MissedRuns[] = [];
    try {
      await this.tickRounds(now, lease, result, missedRuns);
    } finally {
      this.logMissed(missedRuns);
    }
    return result;
  }

  private async tickRounds(
    now: number,
    lease: number,
    result: SchedulerTickResult,
    missedRuns: MissedRuns[],
  ): Promise<void> {
    // Unreadable records stay due and unclaimed; later rounds read past them.
    let skipped = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const due = await this.store.due(now, this.options.batchSize, skipped);
      result.due += due.length;
      if (due.length === 0) break;
      const records = await this.store.get(due.map(([id]) => id));
      const plans: Promise<PlannedClaim | undefined>[] = [];
      due.forEach(([id, expected], i) => {
        const record = records[i];
        if (record?.kind === 'unreadable') {
          skipped++;
          this.refuse(record);
        } else if (!this.delivery.sends(id, record)) skipped++;
        else plans.push(this.plan(id, expected, record, now));
      });
      // A schedule whose runs cannot be computed now stays due, unclaimed, like an unreadable one.
      const planned: PlannedClaim[] = [];
      for (const plan of await Promise.all(plans)) {
        if (plan) planned.push(plan);
        else skipped++;
      }
      const won = await this.store.claim(
        lease,
        planned.map((p) => p.claim),
      );
      const members: string[] = [];
      const known = new Map<string, StoredSchedule>();
      won.forEach((claimed, i) => {
        if (!claimed) return;
        const { claim, schedule, missed } = planned[i];
        result.claimed++;
        members.push(...claim.members);
        if (schedule) known.set(claim.id, schedule);
        if (missed) missedRuns.push(missed);
      });
      await this.delivery.deliver(members, result, this.refuseRecord, known);
      // Stop when the batch was short, or when every claim was lost to other instances (a batch
      // of unreadable records only moves the offset on).
      if (due.length < this.options.batchSize) break;
      if (planned.length > 0 && !won.some(Boolean)) break;
    }
  }

  /**
   * The planner's claim, or undefined when it cannot be computed now (a `'tenant'` zone whose
   * `TenantDirectory` lookup failed): the schedule stays due and unclaimed, and a later tick plans
   * it again (runs late by then follow its `missed` policy). Logged once until it plans again.
   */
  private async plan(
    id: string,
    expected: number,
    schedule: StoredSchedule | undefined,
    now: number,
  ): Promise<PlannedClaim | undefined> {
    if (schedule?.enabled && this.refused.size > 0) this.refused.delete(id);
    try {
      const planned = await this.planner.plan(id, expected, schedule, now);
      this.unplanned.delete(id);
      return planned;
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      if (this.unplanned.get(id) !== why) {
        if (this.unplanned.size > 5_000) this.unplanned.clear();
        this.unplanned.set(id, why);
        this.logger.error(`${tenantLogFields()} ${Messages.scheduleNotPlanned(id, why)}`);
      }
      return undefined;
    }
  }

  /**
   * One schedule's missed runs: one line, with its tenant. Several in one tick: one line for all
   * (their count, the runs missed and run, the first), and each one's own line at debug level.
   */
  private logMissed(missedRuns: MissedRuns[]): void {
    if (missedRuns.length === 1) {
      const [{ schedule }] = missedRuns;
      const ref = schedule.kind === 'tenant' ? { tenantId: schedule.tenantId } : {};
      this.logger.warn(`${tenantLogFields(ref)} ${missedLine(missedRuns[0])}`);
      return;
    }
    if (missedRuns.length === 0) return;
    let missed = 0;
    let exact = true;
    let caughtUp = 0;
    for (const one of missedRuns) {
      missed += one.plan.missed;
      exact &&= one.plan.missedExact;
      caughtUp += one.plan.caughtUp;
      const ref = one.schedule.kind === 'tenant' ? { tenantId: one.schedule.tenantId } : {};
      this.logger.debug(`${tenantLogFields(ref)} ${missedLine(one)}`);
    }
    this.logger.warn(
      `${tenantLogFields()} ${Messages.schedulesMissedRuns(missedRuns.length, `${missed}${exact ? '' : '+'}`, caughtUp, missedLine(missedRuns[0]))}`,
    );
  }
}

/** `tenant t schedule "k": 5 missed run(s); policy "once" runs 1 of them`. */
function missedLine({ owner, schedule, plan }: MissedRuns): string {
  return (
    `${owner}: ${plan.missed}${plan.missedExact ? '' : '+'} missed run(s); ` +
    `policy "${schedule.missed}" runs ${plan.caughtUp} of them`
  );
}
