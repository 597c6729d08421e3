import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsString,
  Matches,
  Max,
  Min,
  ValidateNested,
  validateSync,
} from 'class-validator';
import { StoredSchedule, UnreadableSchedule, scheduleIdOf, storedJob } from './stored-schedule';
import {
  MAX_CATCH_UP,
  MISSED_POLICIES,
  SCHEDULE_KEY_PATTERN,
  ScheduleJobDto,
  describe,
} from './tenant-schedule.dto';
import { MissedRunPolicy, TenantScheduleJob } from './tenant-schedule.interface';

class StoredScheduleBaseDto {
  @IsString() @IsNotEmpty() cron!: string;
  @IsString() @IsNotEmpty() timezone!: string;
  @IsBoolean() enabled!: boolean;
  @IsIn(MISSED_POLICIES) missed!: MissedRunPolicy;
  @IsInt() @Min(1) @Max(MAX_CATCH_UP) maxCatchUp!: number;
}

class StoredTenantScheduleDto extends StoredScheduleBaseDto {
  @IsString() @IsNotEmpty() tenantId!: string;
  @Matches(SCHEDULE_KEY_PATTERN) key!: string;
  @IsDefined() @ValidateNested() job!: ScheduleJobDto;
}

class StoredCronScheduleDto extends StoredScheduleBaseDto {
  @Matches(SCHEDULE_KEY_PATTERN) name!: string;
}

/**
 * Reads one record of the `defs` hash stored under `id`. Records written by any version so far
 * parse into the union (unknown fields are left out); anything else, including a record whose
 * fields name another id, comes back as an `UnreadableSchedule` with the reason, never a throw.
 */
export function parseStoredSchedule(id: string, raw: string): StoredSchedule | UnreadableSchedule {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return unreadable(id, `is not JSON (${(error as Error).message})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return unreadable(id, 'is not a JSON object');
  }
  const schedule = toSchedule(id, value as Record<string, unknown>);
  if (schedule.kind === 'unreadable') return schedule;
  const owner = scheduleIdOf(schedule);
  return owner === id
    ? schedule
    : unreadable(id, `describes schedule ${JSON.stringify(owner)}, not the id it is stored under`);
}

function toSchedule(
  id: string,
  record: Record<string, unknown>,
): StoredSchedule | UnreadableSchedule {
  switch (record.kind) {
    case 'tenant': {
      const job = record.job;
      const dto = Object.assign(new StoredTenantScheduleDto(), record, {
        job: job && typeof job === 'object' ? Object.assign(new ScheduleJobDto(), job) : job,
      });
      const why = firstError(dto);
      if (why) return unreadable(id, why);
      return {
        kind: 'tenant',
        tenantId: dto.tenantId,
        key: dto.key,
        ...baseOf(dto),
        job: storedJob(dto.job as TenantScheduleJob),
      };
    }
    case 'cron': {
      const dto = Object.assign(new StoredCronScheduleDto(), record);
      const why = firstError(dto);
      if (why) return unreadable(id, why);
      return { kind: 'cron', name: dto.name, ...baseOf(dto) };
    }
    default:
      return unreadable(
        id,
        `has an unknown kind ${JSON.stringify(record.kind) ?? 'undefined'} ` +
          '(known: "tenant", "cron"; written by a newer version?)',
      );
  }
}

function baseOf(dto: StoredScheduleBaseDto) {
  return {
    cron: dto.cron,
    timezone: dto.timezone,
    enabled: dto.enabled,
    missed: dto.missed,
    maxCatchUp: dto.maxCatchUp,
  };
}

function firstError(dto: object): string | undefined {
  const errors = validateSync(dto);
  if (errors.length === 0) return undefined;
  const [field, why] = describe(errors[0]);
  return `has a bad "${field}": ${why}`;
}

function unreadable(id: string, reason: string): UnreadableSchedule {
  return { kind: 'unreadable', id, reason };
}
