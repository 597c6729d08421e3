import { BeforeApplicationShutdown, Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { TenantQueueRedis, settlesWithin } from '../core/redis/tenant-queue.redis';
import { TenantDirectory } from '../core/types/tenant-directory.interface';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { AnyZoneCron } from './any-zone-cron';
import { RunPlan, planRuns } from './run-plan';
import { fanOutJobId, tenantScheduleJobId } from './schedule-job-id';
import { ScheduleClaim, ScheduleStore } from './schedule.store';
import { SchedulerClock } from './scheduler-clock';
import {
  ScheduleRecord,
  StoredCronSchedule,
  StoredSchedule,
  StoredTenantSchedule,
  UnreadableSchedule,
  unknownKind,
} from './stored-schedule';
import { MissedRunPolicy, SchedulerTickResult } from './tenant-schedule.interface';
import {
  ResolvedTenantSchedulerOptions,
  TENANT_SCHEDULER_OPTIONS,
} from './tenant-scheduler.options';
import { ZonedCron, isValidTimezone } from './zoned-cron';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { Messages } from '../tenant-queue.messages';
import { moduleJobOptions } from '../core/queues/job-id.check';

/** Data of a `@TenantCron` fan-out job: settle every occurrence in [from, to]. */
export interface FanOutJobData {
  name: string;
  cron: string;
  timezone: string;
  missed: MissedRunPolicy;
  maxCatchUp: number;
  from: number;
  to: number;
}

export const FANOUT_JOB = 'tq.cron.fanout';
const MAX_ROUNDS = 50;

/** What a tick does with one due schedule: its claim, and a log line to write if it wins. */
interface Planned {
  claim: ScheduleClaim;
  schedule?: StoredSchedule;
  log?: () => void;
}

/**
 * @internal One scheduler tick: re-send claims whose claimer crashed, then read the due
 * schedules, plan each one's runs (missed-run policy), claim them atomically, enqueue, and
 * clear the outbox. Cost grows with the due entries, never with the schedules stored.
 */
@Injectable()
export class ScheduleTicker implements BeforeApplicationShutdown {
  private readonly logger = new Logger('TenantScheduler');
  private readonly parsed = new Map<string, ZonedCron>();
  private readonly anyZone = new Map<string, AnyZoneCron>();
  /** Unreadable records already logged by this process (id -> reason), so a tick does not repeat them. */
  private readonly refused = new Map<string, string>();
  private running: Promise<SchedulerTickResult> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Epoch ms at which the last tick of this process finished (for health checks). */
  lastTickAt: number | undefined;

  constructor(
    @Inject(TENANT_SCHEDULER_OPTIONS) readonly options: ResolvedTenantSchedulerOptions,
    @Inject(SchedulerClock) readonly clock: SchedulerClock,
    private readonly store: ScheduleStore,
    private readonly registry: TenantQueueRegistry,
    private readonly redis: TenantQueueRedis,
    @Optional() @Inject(TenantDirectory) private readonly directory?: TenantDirectory,
  ) {}

  get fanOutQueueName(): string {
    return `${this.options.cronQueue}-fanout`;
  }

  /** Starts the automatic tick (unref'd, so it never keeps the process alive). */
  start(): void {
    if (!this.options.enabled || this.timer) return;
    this.timer = setInterval(() => {
      this.tick().catch((error: Error) =>
        this.logger.error(`${tenantLogFields()} tick failed: ${error.message}`),
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
    this.running ??= this.runTick().finally(() => {
      this.running = undefined;
      this.lastTickAt = Date.now();
    });
    return this.running;
  }

  /** The parsed cron of a schedule in a zone (cached). */
  cronOf(expression: string, timezone: string): ZonedCron {
    const key = `${timezone} ${expression}`;
    let cron = this.parsed.get(key);
    if (!cron) {
      if (this.parsed.size > 5_000) this.parsed.clear();
      cron = ZonedCron.parse(expression, timezone);
      this.parsed.set(key, cron);
    }
    return cron;
  }

  /** The first run of a stored schedule strictly after `after`. */
  async nextRunOf(schedule: StoredSchedule, after: number): Promise<number | null> {
    if (!schedule.enabled) return null;
    switch (schedule.kind) {
      case 'tenant':
        return this.cronOf(schedule.cron, await this.zoneOf(schedule)).nextAfter(after);
      case 'cron':
        return schedule.timezone === 'tenant'
          ? this.anyZoneOf(schedule.cron).nextAfter(after)
          : this.cronOf(schedule.cron, schedule.timezone).nextAfter(after);
      default:
        return unknownKind(schedule);
    }
  }

  /** The zone a tenant schedule follows now (a `'tenant'` zone is read from the directory). */
  async zoneOf(schedule: StoredTenantSchedule): Promise<string> {
    if (schedule.timezone !== 'tenant') return schedule.timezone;
    const tenant = await this.directory?.getTenant(schedule.tenantId);
    const zone = tenant?.timezone;
    return typeof zone === 'string' && isValidTimezone(zone) ? zone : 'UTC';
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

  /** A cron in every zone at once: the driver of a tenant-zone `@TenantCron` (cached). */
  private anyZoneOf(expression: string): AnyZoneCron {
    let driver = this.anyZone.get(expression);
    if (!driver) {
      driver = new AnyZoneCron(this.cronOf(expression, 'UTC'));
      this.anyZone.set(expression, driver);
    }
    return driver;
  }

  private async runTick(): Promise<SchedulerTickResult> {
    const result: SchedulerTickResult = {
      due: 0,
      claimed: 0,
      enqueued: 0,
      recovered: 0,
      jobIds: [],
    };
    const now = await this.clock.now();
    const lease = now + this.options.claimTimeout;
    const stale = await this.store.recover(now, lease, this.options.batchSize);
    if (stale.length > 0) {
      this.logger.warn(
        `${tenantLogFields()} re-sending ${stale.length} claimed occurrence(s) left by a stopped instance`,
      );
      result.recovered = stale.length;
      await this.deliver(stale, result);
    }
    // Unreadable records stay due and unclaimed; later rounds read past them.
    let skipped = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const due = await this.store.due(now, this.options.batchSize, skipped);
      result.due += due.length;
      if (due.length === 0) break;
      const records = await this.store.get(due.map(([id]) => id));
      const plans: Promise<Planned>[] = [];
      due.forEach(([id, expected], i) => {
        const record = records[i];
        if (record?.kind === 'unreadable') {
          skipped++;
          this.refuse(record);
        } else plans.push(this.plan(id, expected, record, now));
      });
      const planned = await Promise.all(plans);
      const won = await this.store.claim(
        lease,
        planned.map((p) => p.claim),
      );
      const members: string[] = [];
      const known = new Map<string, StoredSchedule>();
      won.forEach((claimed, i) => {
        if (!claimed) return;
        const { claim, schedule, log } = planned[i];
        result.claimed++;
        members.push(...claim.members);
        if (schedule) known.set(claim.id, schedule);
        log?.();
      });
      await this.deliver(members, result, known);
      // Stop when the batch was short, or when every claim was lost to other instances (a batch
      // of unreadable records only moves the offset on).
      if (due.length < this.options.batchSize) break;
      if (planned.length > 0 && !won.some(Boolean)) break;
    }
    return result;
  }

  private async plan(
    id: string,
    expected: number,
    schedule: StoredSchedule | undefined,
    now: number,
  ): Promise<Planned> {
    if (!schedule || !schedule.enabled) return { claim: { id, expected, next: null, members: [] } };
    if (this.refused.size > 0) this.refused.delete(id);
    try {
      return await this.planOf(id, expected, schedule, now);
    } catch (error) {
      this.logger.error(
        `${tenantLogFields()} schedule ${id} cannot be computed, removed from the due index: ${error}`,
      );
      return { claim: { id, expected, next: null, members: [] } };
    }
  }

  private planOf(id: string, expected: number, schedule: StoredSchedule, now: number) {
    switch (schedule.kind) {
      case 'tenant':
        return this.planTenant(id, expected, schedule, now);
      case 'cron':
        return this.planCron(id, expected, schedule, now);
      default:
        return unknownKind(schedule);
    }
  }

  /** One outbox member per occurrence to run. */
  private async planTenant(
    id: string,
    expected: number,
    schedule: StoredTenantSchedule,
    now: number,
  ): Promise<Planned> {
    const cron = this.cronOf(schedule.cron, await this.zoneOf(schedule));
    const plan = this.planRuns(cron, schedule, expected, now);
    const owner = `tenant ${schedule.tenantId} schedule "${schedule.key}"`;
    return {
      claim: { id, expected, next: plan.next, members: plan.runs.map((run) => `${id}|${run}`) },
      schedule,
      log: plan.missed > 0 ? this.missedLog(owner, schedule, plan) : undefined,
    };
  }

  /** One fan-out member for the whole range; its job plans the runs of every tenant. */
  private async planCron(
    id: string,
    expected: number,
    schedule: StoredCronSchedule,
    now: number,
  ): Promise<Planned> {
    const fanOut = `${id}|${expected}-${now}`;
    // A tenant-zone cron is planned per tenant by its fan-out job.
    if (schedule.timezone === 'tenant') {
      const next = await this.nextRunOf(schedule, now);
      return { claim: { id, expected, next, members: [fanOut] }, schedule };
    }
    const plan = this.planRuns(
      this.cronOf(schedule.cron, schedule.timezone),
      schedule,
      expected,
      now,
    );
    const owner = `@TenantCron "${schedule.name}"`;
    return {
      claim: { id, expected, next: plan.next, members: plan.runs.length > 0 ? [fanOut] : [] },
      schedule,
      // When runs remain, the fan-out job logs the missed ones (per zone, with the tenant count).
      log:
        plan.missed > 0 && plan.runs.length === 0
          ? this.missedLog(owner, schedule, plan)
          : undefined,
    };
  }

  private planRuns(cron: ZonedCron, schedule: StoredSchedule, from: number, now: number) {
    return planRuns(cron, {
      from,
      now,
      policy: schedule.missed,
      maxCatchUp: schedule.maxCatchUp,
      lateAfter: this.options.lateAfter,
    });
  }

  private missedLog(owner: string, schedule: StoredSchedule, plan: RunPlan) {
    const ref = schedule.kind === 'tenant' ? { tenantId: schedule.tenantId } : {};
    return () =>
      this.logger.warn(
        `${tenantLogFields(ref)} ${owner}: ${plan.missed}${plan.missedExact ? '' : '+'} missed run(s); ` +
          `policy "${schedule.missed}" runs ${plan.caughtUp} of them`,
      );
  }

  /**
   * Enqueues claimed occurrences, then clears them from the outbox. Failures, and occurrences
   * whose record is unreadable, stay leased and are re-sent after `claimTimeout`.
   */
  private async deliver(
    members: string[],
    result: SchedulerTickResult,
    known = new Map<string, StoredSchedule>(),
  ): Promise<void> {
    if (members.length === 0) return;
    const missing = [...new Set(members.map((m) => splitMember(m)[0]))].filter(
      (id) => !known.has(id),
    );
    const byId = new Map<string, ScheduleRecord>(known);
    const records = await this.store.get(missing);
    missing.forEach((id, i) => byId.set(id, records[i]));
    const done: string[] = [];
    await Promise.all(
      members.map(async (member) => {
        const [id, spec] = splitMember(member);
        const record = byId.get(id);
        if (record?.kind === 'unreadable') return this.refuse(record);
        try {
          // No record: the schedule was deleted after the claim, so nothing is due.
          if (record) result.jobIds.push(await this.enqueue(record, spec));
          done.push(member);
        } catch (error) {
          this.logger.error(
            `${tenantLogFields()} cannot enqueue ${member} (retried later): ${(error as Error).message}`,
          );
        }
      }),
    );
    result.enqueued += done.length;
    await this.store.ack(done);
  }

  private enqueue(schedule: StoredSchedule, spec: string): Promise<string> {
    switch (schedule.kind) {
      case 'tenant':
        return this.enqueueRun(schedule, Number(spec));
      case 'cron': {
        const [from, to] = spec.split('-').map(Number);
        return this.enqueueFanOut(schedule, from, to);
      }
      default:
        return unknownKind(schedule);
    }
  }

  private async enqueueRun(schedule: StoredTenantSchedule, occurrence: number): Promise<string> {
    const { job, tenantId } = schedule;
    const jobId = tenantScheduleJobId(tenantId, schedule.key, occurrence);
    await this.registry
      .getQueue(job.queue)
      .addForTenant(tenantId, job.name, job.data ?? {}, moduleJobOptions({ ...job.opts, jobId }));
    return jobId;
  }

  private async enqueueFanOut(schedule: StoredCronSchedule, from: number, to: number) {
    const data: FanOutJobData = {
      name: schedule.name,
      cron: schedule.cron,
      timezone: schedule.timezone,
      missed: schedule.missed,
      maxCatchUp: schedule.maxCatchUp,
      from,
      to,
    };
    const queue = this.registry.createQueue({ name: this.fanOutQueueName, tenantScoped: false });
    const job = await queue.add(
      FANOUT_JOB,
      data as never,
      moduleJobOptions({
        jobId: fanOutJobId(schedule.name, from),
        removeOnComplete: { count: 1_000 },
        removeOnFail: { count: 1_000 },
        attempts: 5,
        backoff: { type: 'exponential', delay: 1_000 },
      }),
    );
    return job.id;
  }
}

/** `<schedule id>|<spec>`: the spec has no `|`, a tenant id in the schedule id may. */
function splitMember(member: string): [string, string] {
  const at = member.lastIndexOf('|');
  return [member.slice(0, at), member.slice(at + 1)];
}
