import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { jobOptionsProblem } from '../core/queues/job-options.check';
import { isTenantDirectoryConfigured } from '../core/tenants/default-ports';
import { TenantDirectory } from '../core/types/tenant-directory.interface';
import { firstUnknownOption, unknownOptionWhy } from '../core/options/option-names';
import { Messages } from '../tenant-queue.messages';
import { InvalidScheduleError } from './invalid-schedule.error';
import { tenantCronJobId } from './schedule-job-id';
import { TENANT_CRON_METADATA, TenantCronMetadata } from './tenant-cron.decorator';
import { TenantCronHandler } from './tenant-cron.host';
import { MAX_CATCH_UP, MISSED_POLICIES, SCHEDULE_KEY_PATTERN } from './tenant-schedule.dto';
import {
  ResolvedTenantSchedulerOptions,
  TENANT_SCHEDULER_OPTIONS,
} from './tenant-scheduler.options';
import { ZonedCron, assertCronSteps } from './zoned-cron';

/** A validated `@TenantCron`: every option with a default has its value. */
export type Cron = TenantCronMetadata &
  Required<Pick<TenantCronMetadata, 'timezone' | 'missed' | 'maxCatchUp' | 'queue'>>;

/** Every `@TenantCron` method of the app's static providers, validated, and its handler. */
export function discoverTenantCrons(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  reflector: Reflector,
  cronQueue: string,
) {
  const crons = new Map<string, Cron>();
  const handlers = new Map<string, Map<string, TenantCronHandler>>();
  for (const wrapper of discovery.getProviders()) {
    const instance = wrapper.instance;
    if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
    const prototype = Object.getPrototypeOf(instance);
    for (const method of scanner.getAllMethodNames(prototype)) {
      const metadata = reflector.get<TenantCronMetadata | undefined>(
        TENANT_CRON_METADATA,
        prototype[method],
      );
      if (!metadata) continue;
      const cron = validateTenantCron(metadata, cronQueue);
      if (crons.has(cron.name)) throw new InvalidScheduleError(Messages.duplicateCron(cron.name));
      crons.set(cron.name, cron);
      const byName = handlers.get(cron.queue) ?? new Map<string, TenantCronHandler>();
      byName.set(cron.name, (run, job) => instance[method](run, job));
      handlers.set(cron.queue, byName);
    }
  }
  return { crons, handlers };
}

/** Every `@TenantCron` option name (and the expression the decorator stores beside them). */
const CRON_OPTION_NAMES = Object.keys({
  expression: true,
  name: true,
  timezone: true,
  missed: true,
  maxCatchUp: true,
  queue: true,
  jobOptions: true,
} satisfies Record<keyof TenantCronMetadata, true>).filter((name) => name !== 'expression');

/** Refuses a `@TenantCron` declaration every occurrence would fail with, naming the field. */
export function validateTenantCron(metadata: TenantCronMetadata, cronQueue: string): Cron {
  const field = (name: string, why: string) =>
    new InvalidScheduleError(Messages.invalidSchedule(`@TenantCron.${name}`, why));
  const unknown = firstUnknownOption(metadata, [...CRON_OPTION_NAMES, 'expression']);
  if (unknown !== undefined) throw field(unknown, unknownOptionWhy(unknown, CRON_OPTION_NAMES));
  if (typeof metadata.name !== 'string' || !SCHEDULE_KEY_PATTERN.test(metadata.name)) {
    throw field('name', `must match ${SCHEDULE_KEY_PATTERN}`);
  }
  const missed = metadata.missed ?? 'skip';
  if (!MISSED_POLICIES.includes(missed)) throw field('missed', 'must be skip, once or all');
  const maxCatchUp = metadata.maxCatchUp ?? 10;
  if (!Number.isInteger(maxCatchUp) || maxCatchUp < 1 || maxCatchUp > MAX_CATCH_UP) {
    throw field('maxCatchUp', `must be an integer from 1 to ${MAX_CATCH_UP}`);
  }
  const timezone = metadata.timezone ?? 'UTC';
  ZonedCron.parse(metadata.expression, timezone === 'tenant' ? 'UTC' : timezone);
  assertCronSteps(metadata.expression);
  // Options every tenant's job would be refused with fail the app now, not each fan-out.
  const opts: unknown = metadata.jobOptions;
  if (opts !== undefined) {
    if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
      throw field('jobOptions', 'must be an object of BullMQ job options');
    }
    if ('parent' in opts && opts.parent !== undefined) {
      throw field('jobOptions.parent', Messages.scheduleJobParent());
    }
    const jobId = tenantCronJobId(metadata.name, 'tenant', 0);
    const payload = JSON.stringify({ occurrence: new Date(0).toISOString() });
    const problem = jobOptionsProblem({ ...opts, jobId }, payload);
    if (problem) throw field(`jobOptions.${problem.option}`, problem.why);
  }
  return {
    ...metadata,
    timezone,
    missed,
    maxCatchUp,
    queue: metadata.queue ?? cronQueue,
  };
}

/** `@TenantCron` needs a directory: it is where the fan-out finds the active tenants. */
export function assertCronDirectory(
  crons: ReadonlyMap<string, Cron>,
  directory: TenantDirectory | undefined,
): void {
  if (crons.size > 0 && !isTenantDirectoryConfigured(directory)) {
    throw new InvalidTenantQueueOptionsError(Messages.cronNeedsDirectory([...crons.keys()][0]));
  }
}

/**
 * The `@TenantCron` checks of `TenantCronExplorer` without its schedules: what
 * `TenantQueueTestingModule` runs, so an app its specs boot also boots with the real module.
 */
@Injectable()
export class TenantCronCheck implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    @Inject(TENANT_SCHEDULER_OPTIONS) private readonly options: ResolvedTenantSchedulerOptions,
    @Optional() @Inject(TenantDirectory) private readonly directory?: TenantDirectory,
  ) {}

  onModuleInit(): void {
    const { crons } = discoverTenantCrons(
      this.discovery,
      this.scanner,
      this.reflector,
      this.options.cronQueue,
    );
    assertCronDirectory(crons, this.directory);
  }
}
