import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
  ValidationError,
  validateSync,
} from 'class-validator';
import { InvalidScheduleError } from './invalid-schedule.error';
import { Messages } from '../tenant-queue.messages';
import { validationWhy } from '../core/options/option-names';
import { TenantScheduleInput } from './tenant-schedule.interface';

/** Schedule keys and cron names: safe inside Redis keys and job ids (no `~`, `|` or `:`). */
export const SCHEDULE_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const MISSED_POLICIES = ['skip', 'once', 'all'] as const;
export const MAX_CATCH_UP = 1_000;

export class ScheduleJobDto {
  @IsString() @Matches(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/) queue!: string;
  @IsString() @MaxLength(200) name!: string;
  @IsOptional() @IsObject() data?: Record<string, unknown>;
  @IsOptional() @IsObject() opts?: Record<string, unknown>;
}

class ScheduleDto {
  @IsString() @MaxLength(200) cron!: string;
  @IsOptional() @IsString() @MaxLength(64) timezone?: string;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsIn(MISSED_POLICIES) missed?: string;
  @IsOptional() @IsInt() @Min(1) @Max(MAX_CATCH_UP) maxCatchUp?: number;
  @IsDefined() @ValidateNested() job!: ScheduleJobDto;
}

/** Validates `upsert` input; throws `InvalidScheduleError` naming the first bad field. */
export function validateScheduleInput(input: TenantScheduleInput): void {
  if (!input || typeof input !== 'object') {
    throw new InvalidScheduleError(Messages.invalidSchedule('(root)', 'must be an object'));
  }
  const dto = Object.assign(new ScheduleDto(), input, {
    job:
      input.job && typeof input.job === 'object'
        ? Object.assign(new ScheduleJobDto(), input.job)
        : input.job,
  });
  const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) {
    const [field, why] = describe(errors[0]);
    throw new InvalidScheduleError(Messages.invalidSchedule(field, why));
  }
  if (input.job.opts && 'jobId' in input.job.opts) {
    throw new InvalidScheduleError(
      Messages.invalidSchedule('job.opts.jobId', 'is set by the scheduler (one id per occurrence)'),
    );
  }
  // Typed out of `opts`, but a caller without types (JSON from an API) can still send it.
  if ((input.job.opts as { parent?: unknown } | undefined)?.parent !== undefined) {
    throw new InvalidScheduleError(
      Messages.invalidSchedule('job.opts.parent', Messages.scheduleJobParent()),
    );
  }
}

/** The first failed field of a validation, as [dotted path, why]. */
export function describe(error: ValidationError, path = ''): [string, string] {
  const field = `${path}${error.property}`;
  if (error.children && error.children.length > 0) return describe(error.children[0], `${field}.`);
  return [field, validationWhy(error)];
}
