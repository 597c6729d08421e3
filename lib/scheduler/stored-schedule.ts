import { tenantKeyPart } from '../core/context/tenant-key';
import { MissedRunPolicy, TenantScheduleJob } from './tenant-schedule.interface';

/** What every stored schedule has, whatever drives it. */
interface StoredScheduleBase {
  cron: string;
  /** An IANA zone, `'UTC'`, or `'tenant'`. */
  timezone: string;
  enabled: boolean;
  missed: MissedRunPolicy;
  maxCatchUp: number;
}

/** A tenant's schedule (`TenantScheduler.upsert`): one job per occurrence. */
export interface StoredTenantSchedule extends StoredScheduleBase {
  kind: 'tenant';
  tenantId: string;
  key: string;
  job: TenantScheduleJob;
}

/** The driver of a `@TenantCron`: one fan-out job per occurrence, to every active tenant. */
export interface StoredCronSchedule extends StoredScheduleBase {
  kind: 'cron';
  name: string;
}

/** A schedule as stored in Redis (the `defs` hash), discriminated on `kind`. */
export type StoredSchedule = StoredTenantSchedule | StoredCronSchedule;

/** A `defs` record that is not a schedule this version can run (left as it is), and why. */
export interface UnreadableSchedule {
  kind: 'unreadable';
  id: string;
  reason: string;
}

/** What reading one schedule id gives: the schedule, an unreadable record, or nothing. */
export type ScheduleRecord = StoredSchedule | UnreadableSchedule | undefined;

/** `t~<tenant key part>~<key>`: keys have no `~`, so the last `~` ends the tenant's part. */
export const tenantScheduleId = (tenantId: string, key: string) =>
  `t~${tenantKeyPart(tenantId)}~${key}`;
export const cronScheduleId = (name: string) => `c~${name}`;

/** The id a schedule is stored under. */
export function scheduleIdOf(schedule: StoredSchedule): string {
  switch (schedule.kind) {
    case 'tenant':
      return tenantScheduleId(schedule.tenantId, schedule.key);
    case 'cron':
      return cronScheduleId(schedule.name);
    default:
      return unknownKind(schedule);
  }
}

/**
 * What draws a schedule's `H` (cron-parser's hashed value), beside its expression: the schedule's
 * id, so one tenant's schedules and every tenant's schedule with the same expression spread over
 * the range `H` stands for, and every process draws the same value. A `@TenantCron` is one driver
 * (one fan-out job per occurrence for every tenant), so its name draws it.
 */
export function hashSeedOf(
  schedule: Pick<StoredTenantSchedule, 'tenantId' | 'key'> | Pick<StoredCronSchedule, 'name'>,
): string {
  return 'name' in schedule
    ? cronScheduleId(schedule.name)
    : tenantScheduleId(schedule.tenantId, schedule.key);
}

/** The compile-time check that a `switch` on `kind` handles every kind. */
export function unknownKind(schedule: never): never {
  throw new Error(`Unknown stored schedule kind: ${JSON.stringify(schedule)}`);
}

/** The job of a tenant schedule as stored: `data` always set, `opts` only when given. */
export function storedJob(job: TenantScheduleJob): TenantScheduleJob {
  return {
    queue: job.queue,
    name: job.name,
    data: job.data ?? {},
    ...(job.opts ? { opts: job.opts } : {}),
  };
}
