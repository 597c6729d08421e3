import { Inject, Injectable } from '@nestjs/common';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { moduleJobOptions } from '../core/queues/job-id.check';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';
import { Messages } from '../tenant-queue.messages';
import { fanOutJobId, tenantScheduleJobId } from './schedule-job-id';
import { ScheduleStore } from './schedule.store';
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

/** Data of a `@TenantCron` fan-out job: settle every occurrence in [from, to]. */
export interface FanOutJobData {
  name: string;
  cron: string;
  timezone: string;
  missed: MissedRunPolicy;
  maxCatchUp: number;
  from: number;
  to: number;
  /**
   * Written by the fan-out after each page whose jobs were all added: the directory's cursor of
   * the next page, where a later attempt of the job starts.
   */
  cursor?: string;
}

export const FANOUT_JOB = 'tq.cron.fanout';

/**
 * @internal The scheduler's delivery: turns claimed outbox members into jobs (a tenant run, or a
 * `@TenantCron` fan-out job) with deterministic ids, then clears them from the outbox.
 */
@Injectable()
export class ScheduleDelivery {
  private readonly logger = new TenantQueueLogger('TenantScheduler');
  /**
   * Queues whose schedules this process has logged as left to others (not registered here): one
   * line per queue, so the set is bounded by the queue names, not by the schedules.
   */
  private readonly leftToOthers = new Set<string>();

  constructor(
    @Inject(TENANT_SCHEDULER_OPTIONS) private readonly options: ResolvedTenantSchedulerOptions,
    private readonly store: ScheduleStore,
    private readonly registry: TenantQueueRegistry,
  ) {}

  /**
   * Whether this process can send a schedule's occurrences: a tenant schedule's queue must be
   * registered here. Another app, or a producer-only process, on the same Redis and prefix ticks
   * the same schedules; one it cannot send is left to a process that can (logged once per
   * queue), instead of being claimed and failing there at every lease.
   */
  sends(id: string, schedule: ScheduleRecord | undefined): boolean {
    if (schedule?.kind !== 'tenant') return true;
    const queue = schedule.job.queue;
    if (this.registry.getQueueNames().includes(queue)) return true;
    if (!this.leftToOthers.has(queue)) {
      this.leftToOthers.add(queue);
      this.logger.warn(
        `${tenantLogFields({ tenantId: schedule.tenantId })} ${Messages.scheduleQueueElsewhere(id, queue)}`,
      );
    }
    return false;
  }

  get fanOutQueueName(): string {
    return `${this.options.cronQueue}-fanout`;
  }

  /**
   * Enqueues claimed occurrences, then clears them from the outbox. Failures, and occurrences
   * whose record is unreadable (handed to `refuse`), stay leased and are re-sent after
   * `claimTimeout`. `known`: records the caller has already read, by schedule id.
   */
  async deliver(
    members: string[],
    result: SchedulerTickResult,
    refuse: (record: UnreadableSchedule) => void,
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
    const handBack: string[] = [];
    // One line for the whole call: a Redis that stalls mid-delivery fails every claimed
    // occurrence (one a tenant), and a line each was a flood of hundreds in one second.
    let failed = 0;
    let first: { member: string; error: Error } | undefined;
    await Promise.all(
      members.map(async (member) => {
        const [id, spec] = splitMember(member);
        const record = byId.get(id);
        if (record?.kind === 'unreadable') return refuse(record);
        if (!this.sends(id, record)) return void handBack.push(member);
        try {
          // No record: the schedule was deleted after the claim, so nothing is due.
          if (record) result.jobIds.push(await this.enqueue(record, spec));
          done.push(member);
        } catch (error) {
          failed++;
          first ??= { member, error: error as Error };
        }
      }),
    );
    if (first) {
      this.logger.error(
        `${tenantLogFields()} ${Messages.scheduleEnqueueFailed(failed, members.length, first.member, first.error.message, this.options.claimTimeout)}`,
      );
    }
    result.enqueued += done.length;
    await this.store.ack(done);
    // Leased again at once, so a process that registers the queue re-sends it at its next tick.
    await this.store.release(handBack);
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
        // A directory down at the occurrence: retried for about 34 minutes (1 s, 2 s, ... 17
        // min) before the occurrence is given up (logged by the fan-out). 5 attempts (15 s) lost
        // it for every tenant in a short outage.
        attempts: FAN_OUT_ATTEMPTS,
        backoff: { type: 'exponential', delay: 1_000 },
      }),
    );
    return job.id;
  }
}

/** Attempts of a `@TenantCron` fan-out job (exponential from 1 s: about 34 minutes in all). */
export const FAN_OUT_ATTEMPTS = 12;

/** `<schedule id>|<spec>`: the spec has no `|`, a tenant id in the schedule id may. */
function splitMember(member: string): [string, string] {
  const at = member.lastIndexOf('|');
  return [member.slice(0, at), member.slice(at + 1)];
}
