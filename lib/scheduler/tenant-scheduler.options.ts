import { IsBoolean, IsInt, IsOptional, Matches, Max, Min, validateSync } from 'class-validator';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { TenantSchedulerOptions } from './tenant-scheduler-options.interface';
import { Messages } from '../tenant-queue.messages';
import { validationWhy } from '../core/options/option-names';

export type ResolvedTenantSchedulerOptions = Required<TenantSchedulerOptions>;

export const TENANT_SCHEDULER_OPTIONS = Symbol('TENANT_SCHEDULER_OPTIONS');

/** `lateAfter` is at least this many tick intervals. */
const LATE_AFTER_TICKS = 2;

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

class SchedulerSchema {
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsInt() @Min(10) @Max(3_600_000) tickInterval?: number;
  @IsOptional() @IsInt() @Min(1) @Max(5_000) batchSize?: number;
  @IsOptional() @IsInt() @Min(100) claimTimeout?: number;
  @IsOptional() @IsInt() @Min(0) lateAfter?: number;
  @IsOptional() @Matches(QUEUE_NAME) cronQueue?: string;
  @IsOptional() @IsInt() @Min(1) @Max(1_000) cronConcurrency?: number;
}

/** Validates the module's `scheduler` option once and fills in defaults. */
export function resolveTenantSchedulerOptions(moduleOptions: {
  scheduler?: TenantSchedulerOptions;
}): ResolvedTenantSchedulerOptions {
  const input = moduleOptions?.scheduler ?? {};
  const errors = validateSync(Object.assign(new SchedulerSchema(), input), {
    whitelist: true,
    forbidNonWhitelisted: true,
  });
  if (errors.length > 0) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions(`scheduler.${errors[0].property}`, validationWhy(errors[0])),
    );
  }
  const resolved = {
    enabled: input.enabled ?? true,
    tickInterval: input.tickInterval ?? 1_000,
    batchSize: input.batchSize ?? 500,
    claimTimeout: input.claimTimeout ?? 30_000,
    lateAfter: input.lateAfter ?? 60_000,
    cronQueue: input.cronQueue ?? 'tq-cron',
    cronConcurrency: input.cronConcurrency ?? 10,
  };
  // An occurrence is claimed up to a tick interval (plus the tick's own time) after it is due:
  // a lateAfter below that makes ordinary tick delay a missed run, which `skip` never runs.
  const least = LATE_AFTER_TICKS * resolved.tickInterval;
  if (resolved.lateAfter < least) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions(
        'scheduler.lateAfter',
        Messages.lateAfterBelowTick(resolved.lateAfter, resolved.tickInterval, least),
      ),
    );
  }
  return resolved;
}
