import { BeforeApplicationShutdown, Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { TenantDirectory } from '../core/types/tenant-directory.interface';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { AnyZoneCron } from './any-zone-cron';
import { planRuns } from './run-plan';
import { fanOutJobId, tenantScheduleJobId } from './schedule-job-id';
import {
  ScheduleClaim,
  ScheduleStore,
  StoredSchedule,
  cronScheduleId,
  tenantScheduleId,
} from './schedule.store';
import { SchedulerClock } from './scheduler-clock';
import { SchedulerTickResult } from './tenant-schedule.interface';
import {
  ResolvedTenantSchedulerOptions,
  TENANT_SCHEDULER_OPTIONS,
} from './tenant-scheduler.options';
import { ZonedCron, isValidTimezone } from './zoned-cron';
import { tenantLogFields } from '../core/context/tenant-log-fields';

/** Data of a `@TenantCron` fan-out job: settle every occurrence in [from, to]. */
export interface FanOutJobData {
  name: string;
  cron: string;
  timezone: string;
  missed: StoredSchedule['missed'];
  maxCatchUp: number;
  from: number;
  to: number;
}

export const FANOUT_JOB = 'tq.cron.fanout';
const MAX_ROUNDS = 50;

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
  private running: Promise<SchedulerTickResult> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Epoch ms at which the last tick of this process finished (for health checks). */
  lastTickAt: number | undefined;

  constructor(
    @Inject(TENANT_SCHEDULER_OPTIONS) readonly options: ResolvedTenantSchedulerOptions,
    @Inject(SchedulerClock) readonly clock: SchedulerClock,
    private readonly store: ScheduleStore,
    private readonly registry: TenantQueueRegistry,
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
    await this.running?.catch(() => undefined);
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
    if (schedule.kind === 'cron' && schedule.timezone === 'tenant') {
      let driver = this.anyZone.get(schedule.cron);
      if (!driver) {
        driver = new AnyZoneCron(this.cronOf(schedule.cron, 'UTC'));
        this.anyZone.set(schedule.cron, driver);
      }
      return driver.nextAfter(after);
    }
    return this.cronOf(schedule.cron, await this.zoneOf(schedule)).nextAfter(after);
  }

  /** The zone a tenant schedule follows now (a `'tenant'` zone is read from the directory). */
  async zoneOf(schedule: StoredSchedule): Promise<string> {
    if (schedule.timezone !== 'tenant') return schedule.timezone;
    const tenant = schedule.tenantId ? await this.directory?.getTenant(schedule.tenantId) : null;
    const zone = tenant?.timezone;
    return typeof zone === 'string' && isValidTimezone(zone) ? zone : 'UTC';
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
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const due = await this.store.due(now, this.options.batchSize);
      result.due += due.length;
      if (due.length === 0) break;
      const schedules = await this.store.get(due.map(([id]) => id));
      const planned = await Promise.all(
        due.map(([id, expected], i) => this.plan(id, expected, schedules[i], now)),
      );
      const won = await this.store.claim(
        lease,
        planned.map((p) => p.claim),
      );
      const members: string[] = [];
      const known = new Map<string, StoredSchedule>();
      won.forEach((claimed, i) => {
        if (!claimed) return;
        result.claimed++;
        members.push(...planned[i].claim.members);
        if (schedules[i]) known.set(due[i][0], schedules[i]!);
        planned[i].log?.();
      });
      await this.deliver(members, result, known);
      // Stop when the batch was short, or when every claim was lost to other instances.
      if (due.length < this.options.batchSize || !won.some(Boolean)) break;
    }
    return result;
  }

  private async plan(
    id: string,
    expected: number,
    schedule: StoredSchedule | undefined,
    now: number,
  ): Promise<{ claim: ScheduleClaim; log?: () => void }> {
    if (!schedule || !schedule.enabled) return { claim: { id, expected, next: null, members: [] } };
    try {
      return await this.planOf(id, expected, schedule, now);
    } catch (error) {
      this.logger.error(
        `${tenantLogFields()} schedule ${id} cannot be computed, removed from the due index: ${error}`,
      );
      return { claim: { id, expected, next: null, members: [] } };
    }
  }

  private async planOf(
    id: string,
    expected: number,
    schedule: StoredSchedule,
    now: number,
  ): Promise<{ claim: ScheduleClaim; log?: () => void }> {
    const fanOut = `${id}|${expected}-${now}`;
    // A tenant-zone cron is planned per tenant by its fan-out job.
    if (schedule.kind === 'cron' && schedule.timezone === 'tenant') {
      const next = await this.nextRunOf(schedule, now);
      return { claim: { id, expected, next, members: [fanOut] } };
    }
    const cron = this.cronOf(schedule.cron, await this.zoneOf(schedule));
    const plan = planRuns(cron, {
      from: expected,
      now,
      policy: schedule.missed,
      maxCatchUp: schedule.maxCatchUp,
      lateAfter: this.options.lateAfter,
    });
    const members =
      schedule.kind === 'cron'
        ? plan.runs.length > 0
          ? [fanOut]
          : []
        : plan.runs.map((run) => `${id}|${run}`);
    const owner =
      schedule.kind === 'cron'
        ? `@TenantCron "${schedule.name}"`
        : `tenant ${schedule.tenantId} schedule "${schedule.key}"`;
    const log =
      plan.missed > 0 && (schedule.kind === 'tenant' || plan.runs.length === 0)
        ? () =>
            this.logger.warn(
              `${tenantLogFields({ tenantId: schedule.tenantId })} ${owner}: ${plan.missed}${plan.missedExact ? '' : '+'} missed run(s); ` +
                `policy "${schedule.missed}" runs ${plan.caughtUp} of them`,
            )
        : undefined;
    return { claim: { id, expected, next: plan.next, members }, log };
  }

  /** Enqueues claimed occurrences, then clears them from the outbox (failures stay leased). */
  private async deliver(
    members: string[],
    result: SchedulerTickResult,
    known = new Map<string, StoredSchedule>(),
  ): Promise<void> {
    if (members.length === 0) return;
    const missing = [...new Set(members.map((m) => splitMember(m)[0]))].filter(
      (id) => !known.has(id),
    );
    const byId = new Map(known);
    for (const schedule of await this.store.get(missing)) {
      if (schedule) byId.set(idOf(schedule), schedule);
    }
    const done: string[] = [];
    await Promise.all(
      members.map(async (member) => {
        const [id, spec] = splitMember(member);
        const schedule = byId.get(id);
        try {
          if (schedule) result.jobIds.push(await this.enqueue(schedule, spec));
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

  private async enqueue(schedule: StoredSchedule, spec: string): Promise<string> {
    if (schedule.kind === 'cron') {
      const [from, to] = spec.split('-').map(Number);
      const data: FanOutJobData = {
        name: schedule.name!,
        cron: schedule.cron,
        timezone: schedule.timezone,
        missed: schedule.missed,
        maxCatchUp: schedule.maxCatchUp,
        from,
        to,
      };
      const queue = this.registry.createQueue({ name: this.fanOutQueueName, tenantScoped: false });
      const job = await queue.add(FANOUT_JOB, data as never, {
        jobId: fanOutJobId(schedule.name!, from),
        removeOnComplete: { count: 1_000 },
        removeOnFail: { count: 1_000 },
        attempts: 5,
        backoff: { type: 'exponential', delay: 1_000 },
      });
      return job.id;
    }
    const occurrence = Number(spec);
    const job = schedule.job!;
    const jobId = tenantScheduleJobId(schedule.tenantId!, schedule.key!, occurrence);
    await this.registry
      .getQueue(job.queue)
      .addForTenant(schedule.tenantId!, job.name, job.data ?? {}, { ...job.opts, jobId });
    return jobId;
  }
}

function idOf(schedule: StoredSchedule): string {
  return schedule.kind === 'cron'
    ? cronScheduleId(schedule.name!)
    : tenantScheduleId(schedule.tenantId!, schedule.key!);
}

/** `<schedule id>|<spec>`: the spec has no `|`, a tenant id in the schedule id may. */
function splitMember(member: string): [string, string] {
  const at = member.lastIndexOf('|');
  return [member.slice(0, at), member.slice(at + 1)];
}
