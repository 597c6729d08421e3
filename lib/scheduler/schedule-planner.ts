import { Inject, Injectable, Optional } from '@nestjs/common';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';
import { TenantDirectory } from '../core/types/tenant-directory.interface';
import { TENANT_QUEUE_MODULE_OPTIONS } from '../core/options/core.options';
import { ownRecordWithin, portTimeoutOf } from '../core/tenants/directory-lookup';
import { Messages } from '../tenant-queue.messages';
import { AnyZoneCron } from './any-zone-cron';
import { RunPlan, planRuns } from './run-plan';
import { ScheduleClaim } from './schedule.store';
import {
  StoredCronSchedule,
  StoredSchedule,
  StoredTenantSchedule,
  hashSeedOf,
  tenantScheduleId,
  unknownKind,
} from './stored-schedule';
import {
  ResolvedTenantSchedulerOptions,
  TENANT_SCHEDULER_OPTIONS,
} from './tenant-scheduler.options';
import { ZonedCron, isValidTimezone } from './zoned-cron';

/** Occurrences a plan counted as missed, for the log line the winner of the claim writes. */
export interface MissedRuns {
  /** Who owns the schedule, as a log reads it (`tenant t schedule "k"`, `@TenantCron "n"`). */
  owner: string;
  schedule: StoredSchedule;
  plan: RunPlan;
}

/** What a tick does with one due schedule: its claim, and the missed runs to log if it wins. */
export interface PlannedClaim {
  claim: ScheduleClaim;
  schedule?: StoredSchedule;
  missed?: MissedRuns;
}

/**
 * @internal The scheduler's planning: which occurrences of a due schedule run at `now`, what
 * its next run is, and what a claim of it writes. No Redis and no clock of its own (`now` is
 * given), so it is unit-tested with any instant; only a `'tenant'` zone reads the directory.
 */
@Injectable()
export class SchedulePlanner {
  private readonly parsed = new Map<string, ZonedCron>();
  private readonly anyZone = new Map<string, AnyZoneCron>();
  private readonly logger = new TenantQueueLogger('TenantScheduler');
  /**
   * Tenant schedules whose directory zone is unknown (id -> zone; NUL and the other id for a record
   * naming another tenant), warned once until it changes.
   */
  private readonly badZones = new Map<string, string>();

  /** How long a `'tenant'` zone's directory lookup may take: `guards.portTimeoutMs`. */
  readonly lookupMs: number;

  constructor(
    @Inject(TENANT_SCHEDULER_OPTIONS) private readonly options: ResolvedTenantSchedulerOptions,
    @Optional() @Inject(TenantDirectory) private readonly directory?: TenantDirectory,
    @Optional()
    @Inject(TENANT_QUEUE_MODULE_OPTIONS)
    given?: { guards?: { portTimeoutMs?: number } },
  ) {
    this.lookupMs = portTimeoutOf(given);
  }

  /**
   * The parsed cron of a schedule in a zone (cached). `seed`: the schedule's `hashSeedOf`, which
   * draws its `H`; an expression without `H` is cached once for every schedule.
   */
  cronOf(expression: string, timezone: string, seed = ''): ZonedCron {
    const own = expression.includes('H') ? seed : '';
    const key = `${timezone} ${own} ${expression}`;
    let cron = this.parsed.get(key);
    if (!cron) {
      if (this.parsed.size > 5_000) this.parsed.clear();
      cron = ZonedCron.parse(expression, timezone, own);
      this.parsed.set(key, cron);
    }
    return cron;
  }

  /** The first run of a stored schedule strictly after `after`. */
  async nextRunOf(schedule: StoredSchedule, after: number): Promise<number | null> {
    if (!schedule.enabled) return null;
    switch (schedule.kind) {
      case 'tenant':
        return this.cronOf(
          schedule.cron,
          await this.zoneOf(schedule),
          hashSeedOf(schedule),
        ).nextAfter(after);
      case 'cron':
        return schedule.timezone === 'tenant'
          ? this.anyZoneOf(schedule.cron, hashSeedOf(schedule)).nextAfter(after)
          : this.cronOf(schedule.cron, schedule.timezone, hashSeedOf(schedule)).nextAfter(after);
      default:
        return unknownKind(schedule);
    }
  }

  /**
   * The zone a tenant schedule follows now (a `'tenant'` zone is read from the directory). A
   * directory zone that is not one is UTC, warned once per schedule until the zone changes.
   */
  async zoneOf(
    schedule: Pick<StoredTenantSchedule, 'timezone' | 'tenantId' | 'key'>,
  ): Promise<string> {
    if (schedule.timezone !== 'tenant') return schedule.timezone;
    // Bounded: a directory that never answers would hold every schedule of the tick. A record
    // naming another tenant gives no zone (UTC), warned as a bad zone is.
    const tenant = this.directory
      ? await ownRecordWithin(this.directory, schedule.tenantId, this.lookupMs, (other) =>
          this.warnRecordOfAnother(schedule, other),
        )
      : undefined;
    const zone = tenant?.timezone;
    if (typeof zone === 'string' && isValidTimezone(zone)) {
      if (this.badZones.size > 0)
        this.badZones.delete(tenantScheduleId(schedule.tenantId, schedule.key));
      return zone;
    }
    if (zone !== undefined && zone !== null && zone !== '') this.warnZone(schedule, String(zone));
    return 'UTC';
  }

  /** True the first time a schedule's directory answer reads `seen` (its zone or another's record). */
  private firstSeen(schedule: Pick<StoredTenantSchedule, 'tenantId' | 'key'>, seen: string) {
    const id = tenantScheduleId(schedule.tenantId, schedule.key);
    if (this.badZones.get(id) === seen) return false;
    if (this.badZones.size > 5_000) this.badZones.clear();
    this.badZones.set(id, seen);
    return true;
  }

  private warnRecordOfAnother(
    schedule: Pick<StoredTenantSchedule, 'tenantId' | 'key'>,
    other: unknown,
  ): void {
    // A zone has no NUL; the mark cannot be taken for one.
    if (!this.firstSeen(schedule, `\0${String(other)}`)) return;
    this.logger.warn(
      `${tenantLogFields({ tenantId: schedule.tenantId })} schedule "${schedule.key}": ` +
        Messages.tenantRecordOfAnotherIgnored(
          schedule.tenantId,
          other,
          "its schedules in the tenant's zone run in UTC",
        ),
    );
  }

  private warnZone(schedule: Pick<StoredTenantSchedule, 'tenantId' | 'key'>, zone: string): void {
    if (!this.firstSeen(schedule, zone)) return;
    this.logger.warn(
      `${tenantLogFields({ tenantId: schedule.tenantId })} schedule "${schedule.key}": ` +
        Messages.tenantZoneUnknown(schedule.tenantId, zone),
    );
  }

  /**
   * The claim of schedule `id`, due since `expected`, at `now`: a missing or disabled schedule
   * leaves the due index. Throws when the schedule's runs cannot be computed.
   */
  async plan(
    id: string,
    expected: number,
    schedule: StoredSchedule | undefined,
    now: number,
  ): Promise<PlannedClaim> {
    if (!schedule || !schedule.enabled) return { claim: { id, expected, next: null, members: [] } };
    switch (schedule.kind) {
      case 'tenant':
        return this.planTenant(id, expected, schedule, now);
      case 'cron':
        return this.planCron(id, expected, schedule, now);
      default:
        return unknownKind(schedule);
    }
  }

  /** A cron in every zone at once: the driver of a tenant-zone `@TenantCron` (cached). */
  private anyZoneOf(expression: string, seed: string): AnyZoneCron {
    const key = expression.includes('H') ? `${seed} ${expression}` : expression;
    let driver = this.anyZone.get(key);
    if (!driver) {
      if (this.anyZone.size > 1_000) this.anyZone.clear();
      driver = new AnyZoneCron(this.cronOf(expression, 'UTC', seed));
      this.anyZone.set(key, driver);
    }
    return driver;
  }

  /** One outbox member per occurrence to run. */
  private async planTenant(
    id: string,
    expected: number,
    schedule: StoredTenantSchedule,
    now: number,
  ): Promise<PlannedClaim> {
    const zone = await this.zoneOf(schedule);
    const cron = this.cronOf(schedule.cron, zone, hashSeedOf(schedule));
    const plan = this.keepUpgradedRun(
      this.runsOf(cron, schedule, expected, now),
      cron,
      zone,
      expected,
      now,
    );
    const owner = `tenant ${schedule.tenantId} schedule "${schedule.key}"`;
    return {
      claim: { id, expected, next: plan.next, members: plan.runs.map((run) => `${id}|${run}`) },
      schedule,
      missed: plan.missed > 0 ? { owner, schedule, plan } : undefined,
    };
  }

  /** One fan-out member for the whole range; its job plans the runs of every tenant. */
  private async planCron(
    id: string,
    expected: number,
    schedule: StoredCronSchedule,
    now: number,
  ): Promise<PlannedClaim> {
    const fanOut = `${id}|${expected}-${now}`;
    // A tenant-zone cron is planned per tenant by its fan-out job.
    if (schedule.timezone === 'tenant') {
      const next = await this.nextRunOf(schedule, now);
      return { claim: { id, expected, next, members: [fanOut] }, schedule };
    }
    const cron = this.cronOf(schedule.cron, schedule.timezone, hashSeedOf(schedule));
    const plan = this.keepUpgradedRun(
      this.runsOf(cron, schedule, expected, now),
      cron,
      schedule.timezone,
      expected,
      now,
    );
    const owner = `@TenantCron "${schedule.name}"`;
    return {
      claim: { id, expected, next: plan.next, members: plan.runs.length > 0 ? [fanOut] : [] },
      schedule,
      // When runs remain, the fan-out job logs the missed ones (per zone, with the tenant count).
      missed: plan.missed > 0 && plan.runs.length === 0 ? { owner, schedule, plan } : undefined,
    };
  }

  private runsOf(cron: ZonedCron, schedule: StoredSchedule, from: number, now: number): RunPlan {
    return planRuns(cron, {
      from,
      now,
      policy: schedule.missed,
      maxCatchUp: schedule.maxCatchUp,
      lateAfter: this.options.lateAfter,
    });
  }

  /**
   * `plan` (of `cron` in `zone`, from the stored next run that made it due), with that stored run
   * kept when an earlier version planned it: its `H` drawn from the expression alone, which the
   * cron as drawn now does not hold. That run happens once, on time, as promised, where the plan
   * of the new `H` alone dropped it (a day's run of a daily cron whose new minute comes first).
   */
  keepUpgradedRun(
    plan: RunPlan,
    cron: ZonedCron,
    zone: string,
    from: number,
    now: number,
  ): RunPlan {
    if (from < now - this.options.lateAfter || cron.nextAfter(from - 1) === from) return plan;
    if (this.cronOf(cron.expression, zone).nextAfter(from - 1) === from) plan.runs.unshift(from);
    return plan;
  }
}
