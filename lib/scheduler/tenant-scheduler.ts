import { Injectable } from '@nestjs/common';
import { TenantEnvelopeCodec } from '../core/envelope/tenant-envelope.codec';
import { InvalidScheduleError } from './invalid-schedule.error';
import { Messages } from '../tenant-queue.messages';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { ScheduleSnapshot, ScheduleStore } from './schedule.store';
import { ScheduleTicker } from './schedule-ticker';
import {
  ScheduleRecord,
  StoredTenantSchedule,
  UnreadableSchedule,
  hashSeedOf,
  storedJob,
  tenantScheduleId,
  unknownKind,
} from './stored-schedule';
import { SCHEDULE_KEY_PATTERN, validateScheduleInput } from './tenant-schedule.dto';
import {
  SchedulerTickResult,
  TenantSchedule,
  TenantScheduleInput,
} from './tenant-schedule.interface';
import { canonicalJson } from '../core/json/canonical-json';
import { moduleJobOptions } from '../core/queues/job-id.check';
import { tenantScheduleJobId } from './schedule-job-id';
import { assertCronSteps } from './zoned-cron';

/** Most runs one `next()` preview lists (as `listTenants` lists at most 1000 tenants). */
const MAX_PREVIEW = 1000;

/**
 * Schedules as tenant data: each tenant may own named schedules that enqueue a job on a cron
 * expression in a time zone. Stored in Redis; any number of instances tick, and each occurrence
 * is enqueued once, with the job id `sched~<tenantId>~<key>~<yyyyMMddTHHmmssZ>`.
 * @publicApi
 */
@Injectable()
export class TenantScheduler {
  constructor(
    private readonly store: ScheduleStore,
    private readonly ticker: ScheduleTicker,
    private readonly registry: TenantQueueRegistry,
    private readonly codec: TenantEnvelopeCodec,
  ) {}

  /**
   * Creates or replaces a tenant's schedule. The cron expression and zone are validated
   * (`InvalidScheduleError`), and the next run is computed from now. The same definition
   * written again (say, from your records at every boot) changes nothing: its stored next run
   * stays, so runs missed while no instance ran are still made up as its `missed` policy says.
   */
  async upsert(tenantId: string, key: string, input: TenantScheduleInput): Promise<TenantSchedule> {
    this.assertIds(tenantId, key);
    validateScheduleInput(input);
    // What each occurrence's enqueue would refuse (payload, options) is refused now, unwritten.
    this.registry
      .getQueue(input.job.queue)
      .checkForTenant(
        tenantId,
        input.job.name,
        input.job.data ?? {},
        moduleJobOptions({ ...input.job.opts, jobId: tenantScheduleJobId(tenantId, key, 0) }),
      );
    const schedule: StoredTenantSchedule = {
      kind: 'tenant',
      tenantId,
      key,
      cron: input.cron.trim(),
      timezone: input.timezone ?? 'UTC',
      enabled: input.enabled ?? true,
      missed: input.missed ?? 'skip',
      maxCatchUp: input.maxCatchUp ?? 10,
      job: storedJob(input.job),
    };
    assertCronSteps(schedule.cron);
    this.ticker.planner.cronOf(
      schedule.cron,
      schedule.timezone === 'tenant' ? 'UTC' : schedule.timezone,
      hashSeedOf(schedule),
    );
    return this.write(tenantScheduleId(tenantId, key), ({ record, next }) =>
      record?.kind === 'tenant' &&
      next !== null &&
      canonicalJson(record) === canonicalJson(schedule)
        ? toView(record, next)
        : schedule,
    );
  }

  /** Deletes a schedule; false when there was none. */
  remove(tenantId: string, key: string): Promise<boolean> {
    this.assertIds(tenantId, key);
    return this.store.remove(tenantScheduleId(tenantId, key), tenantId, key);
  }

  /** The tenant's schedules, by key (a record that cannot be read is logged and left out). */
  async list(tenantId: string): Promise<TenantSchedule[]> {
    return Promise.all((await this.readAll(tenantId)).map((s) => this.view(s)));
  }

  /** Stops a schedule without deleting it. */
  pause(tenantId: string, key: string): Promise<TenantSchedule> {
    return this.setEnabled(tenantId, key, false);
  }

  /** Restarts a paused schedule from now: occurrences that passed while paused do not run. */
  resume(tenantId: string, key: string): Promise<TenantSchedule> {
    return this.setEnabled(tenantId, key, true);
  }

  /**
   * The next `count` runs of a schedule (in its zone as of now), for previews: at most 1000
   * (`InvalidScheduleError` above that); none for 0 or less, whole runs for a fraction.
   */
  async next(tenantId: string, key: string, count = 5): Promise<Date[]> {
    if (count > MAX_PREVIEW) {
      throw new InvalidScheduleError(Messages.schedulePreviewCount(count, MAX_PREVIEW));
    }
    const schedule = await this.load(tenantId, key);
    const wanted = Math.floor(count);
    if (!schedule.enabled || !(wanted > 0)) return [];
    const cron = this.ticker.planner.cronOf(
      schedule.cron,
      await this.ticker.planner.zoneOf(schedule),
      hashSeedOf(schedule),
    );
    const stored = await this.store.nextRun(tenantScheduleId(tenantId, key));
    const first = stored ?? cron.nextAfter(await this.ticker.clock.now());
    if (first === null) return [];
    return [first, ...cron.take(first, wanted - 1)].map((ms) => new Date(ms));
  }

  /**
   * Recomputes the next run of the tenant's `timezone: 'tenant'` schedules. Call it when a
   * tenant's zone changes in your directory: otherwise the run planned in the old zone is kept,
   * and the runs the new zone has before it do not run (a tenant moving east loses that day's).
   * A run already due (or missed while no instance ran) stays, and runs as `missed` says.
   */
  async refreshTenant(tenantId: string): Promise<void> {
    for (const schedule of await this.readAll(tenantId)) {
      if (schedule.timezone !== 'tenant') continue;
      // As stored when it is written (a pause meanwhile stays); one removed meanwhile stays removed.
      // A run due by then stays due (in the zone it was planned in), as `missed` says.
      await this.write(
        tenantScheduleId(tenantId, schedule.key),
        ({ record }) => (record?.kind === 'tenant' ? record : toView(schedule, null)),
        () => true,
      );
    }
  }

  /**
   * Runs one scheduler tick now (claims due occurrences and enqueues their jobs). The module
   * ticks on its own; call this from tests with an injected `SchedulerClock`.
   */
  tick(): Promise<SchedulerTickResult> {
    return this.ticker.tick();
  }

  private setEnabled(tenantId: string, key: string, enabled: boolean) {
    this.assertIds(tenantId, key);
    return this.write(
      tenantScheduleId(tenantId, key),
      ({ id, record }) => {
        if (!record) throw new InvalidScheduleError(Messages.unknownSchedule(tenantId, key));
        return { ...readable(id, record), enabled };
      },
      // A resume of a schedule that runs keeps its due run; of a paused one, starts from now.
      ({ record }) => enabled && record?.kind === 'tenant' && record.enabled !== false,
    );
  }

  /**
   * Writes what `change` makes of the schedule as read now (a view: nothing to write), with its
   * next run from now, or, where `keepDue` says so, from its stored next run when that is due
   * (the ticker then runs it, or makes it up, as `missed` says). A compare-and-set: when another
   * write or a tick's claim changed the schedule between the read and the write, nothing is
   * written and it starts again from a new read. It ends: each round lost is a write that landed.
   */
  private async write(
    id: string,
    change: (seen: ScheduleSnapshot) => StoredTenantSchedule | TenantSchedule,
    keepDue?: (seen: ScheduleSnapshot) => boolean,
  ): Promise<TenantSchedule> {
    for (;;) {
      const seen = await this.store.snapshot(id);
      const schedule = change(seen);
      if (!('kind' in schedule)) return schedule;
      const now = await this.ticker.clock.now();
      const from = seen.next !== null && keepDue?.(seen) ? Math.min(now, seen.next - 1) : now;
      const next = await this.ticker.planner.nextRunOf(schedule, from);
      if (await this.store.putIf(seen, schedule, next)) return toView(schedule, next);
    }
  }

  /** One schedule; a missing or unreadable one is refused with `InvalidScheduleError`. */
  private async load(tenantId: string, key: string): Promise<StoredTenantSchedule> {
    this.assertIds(tenantId, key);
    const id = tenantScheduleId(tenantId, key);
    const [record] = await this.store.get([id]);
    if (!record) throw new InvalidScheduleError(Messages.unknownSchedule(tenantId, key));
    return readable(id, record);
  }

  /** The tenant's readable schedules, by key; each unreadable one is logged, and left as it is. */
  private async readAll(tenantId: string): Promise<StoredTenantSchedule[]> {
    this.codec.assertTenantId(tenantId);
    const ids = (await this.store.tenantKeys(tenantId)).map((key) =>
      tenantScheduleId(tenantId, key),
    );
    const schedules: StoredTenantSchedule[] = [];
    (await this.store.get(ids)).forEach((record, i) => {
      if (!record) return;
      const schedule = tenantScheduleOf(ids[i], record);
      if (schedule.kind === 'tenant') schedules.push(schedule);
      else this.ticker.refuse(schedule);
    });
    return schedules;
  }

  private async view(schedule: StoredTenantSchedule): Promise<TenantSchedule> {
    const id = tenantScheduleId(schedule.tenantId, schedule.key);
    return toView(schedule, await this.store.nextRun(id));
  }

  private assertIds(tenantId: string, key: string): void {
    this.codec.assertTenantId(tenantId);
    if (typeof key !== 'string' || !SCHEDULE_KEY_PATTERN.test(key)) {
      throw new InvalidScheduleError(
        Messages.invalidSchedule('key', `must match ${SCHEDULE_KEY_PATTERN}`),
      );
    }
  }
}

/** A record read at a tenant schedule's id as one (`InvalidScheduleError` when it is not). */
function readable(id: string, record: NonNullable<ScheduleRecord>): StoredTenantSchedule {
  const schedule = tenantScheduleOf(id, record);
  if (schedule.kind === 'unreadable') {
    throw new InvalidScheduleError(Messages.unreadableSchedule(id, schedule.reason));
  }
  return schedule;
}

/** A record read at a tenant schedule's id, narrowed to a tenant schedule. */
function tenantScheduleOf(
  id: string,
  record: NonNullable<ScheduleRecord>,
): StoredTenantSchedule | UnreadableSchedule {
  switch (record.kind) {
    case 'tenant':
    case 'unreadable':
      return record;
    case 'cron':
      return { kind: 'unreadable', id, reason: 'is a @TenantCron driver, not a tenant schedule' };
    default:
      return unknownKind(record);
  }
}

function toView(schedule: StoredTenantSchedule, next: number | null): TenantSchedule {
  return {
    tenantId: schedule.tenantId,
    key: schedule.key,
    cron: schedule.cron,
    timezone: schedule.timezone,
    enabled: schedule.enabled,
    missed: schedule.missed,
    maxCatchUp: schedule.maxCatchUp,
    job: schedule.job,
    nextRunAt: next === null ? null : new Date(next),
  };
}
