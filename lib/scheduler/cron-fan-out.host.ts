import { InvalidTenantIdError } from '../core/errors';
import {
  TenantDirectory,
  TenantPage,
  TenantRecord,
} from '../core/types/tenant-directory.interface';
import { TenantJob } from '../core/types/tenant-job.interface';
import { TenantWorkerHost } from '../core/processor/tenant-worker-host';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { RunPlan, planRuns } from './run-plan';
import { tenantCronJobId } from './schedule-job-id';
import { FanOutJobData } from './schedule-delivery';
import { ScheduleTicker } from './schedule-ticker';
import { TenantCronMetadata } from './tenant-cron.decorator';
import { isValidTimezone } from './zoned-cron';
import { hashSeedOf } from './stored-schedule';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';
import { moduleJobOptions } from '../core/queues/job-id.check';
import { Messages } from '../tenant-queue.messages';
import { listActiveTenantsWithin } from '../core/tenants/directory-lookup';
import { UNKNOWN_CRON_HAND_BACK_MS, handBackUnknownCron } from './unknown-cron';

/**
 * @internal Runs a `@TenantCron` fan-out job: pages through the active tenants and enqueues one
 * job per tenant and occurrence. With `timezone: 'tenant'` each tenant is matched in its own
 * zone, read from the directory now, so zone changes and suspensions apply at once.
 */
export class CronFanOutHost extends TenantWorkerHost {
  private readonly logger = new TenantQueueLogger('TenantScheduler');
  private readonly warnedZones = new Set<string>();
  /** `@TenantCron` names whose fan-out found the directory failing, warned once until it answers. */
  private readonly directoryDown = new Set<string>();
  /** `@TenantCron` names of other versions whose jobs were handed back, warned once each. */
  private readonly handedBack = new Set<string>();

  constructor(
    private readonly crons: ReadonlyMap<string, TenantCronMetadata & { queue: string }>,
    private readonly directory: TenantDirectory,
    private readonly registry: TenantQueueRegistry,
    private readonly ticker: ScheduleTicker,
  ) {
    super();
  }

  async process(
    job: TenantJob<FanOutJobData>,
    token?: string,
  ): Promise<{ tenants: number; jobs: number }> {
    if (!this.crons.has(job.data.name)) return this.unknown(job, token);
    try {
      return await this.fanOut(job);
    } catch (error) {
      // BullMQ retries it; after the last attempt the tenants it had not reached get no job for
      // this occurrence, and no missed policy brings it back (the driver moved on): say so.
      const attempts = job.opts.attempts ?? 1;
      if (job.attemptsMade + 1 >= attempts) {
        this.logger.error(
          `${tenantLogFields()} @TenantCron "${job.data.name}": fan-out ${job.id} failed for good ` +
            `after ${attempts} attempt(s) (${error instanceof Error ? error.message : String(error)}); ` +
            `tenants it had not reached get no job for this occurrence. Fix the cause (the ` +
            `TenantDirectory?), then retry the failed job ${job.id} (job.retry()): the jobs it ` +
            `added already are not added twice.`,
        );
      }
      throw error;
    }
  }

  private async fanOut(job: TenantJob<FanOutJobData>): Promise<{ tenants: number; jobs: number }> {
    const data = job.data;
    const cron = this.crons.get(data.name)!;
    const queue = this.registry.getQueue(cron.queue);
    const plans = new Map<string, RunPlan & { tenants: number }>();
    // An earlier attempt (failed, or killed and rerun as stalled) enqueued the pages before this
    // cursor through: starting again from the first page added their tenants again, and those
    // whose job had run and been removed (`removeOnComplete`) ran twice.
    let cursor: string | null = typeof data.cursor === 'string' ? data.cursor : null;
    let tenants = 0;
    let jobs = 0;
    let failure: unknown;
    do {
      // Bounded: a directory that never answers held this job, and its worker slot, for good.
      // The attempt fails before this page adds anything, and BullMQ retries it.
      const page: TenantPage = await listActiveTenantsWithin(
        this.directory,
        cursor,
        this.ticker.planner.lookupMs,
      ).catch((error: unknown) => {
        this.directoryFailed(data.name, error);
        throw error;
      });
      const adds: Promise<unknown>[] = [];
      for (const tenant of page.tenants) {
        if (tenant.status !== 'active') continue;
        tenants++;
        const plan = this.planFor(data, this.zoneOf(data, tenant), plans);
        plan.tenants++;
        for (const occurrence of plan.runs) {
          const jobId = tenantCronJobId(data.name, tenant.id, occurrence);
          const payload = { occurrence: new Date(occurrence).toISOString() };
          adds.push(
            queue.addForTenant(
              tenant.id,
              data.name,
              payload,
              moduleJobOptions({ ...cron.jobOptions, jobId }),
            ),
          );
        }
      }
      for (const result of await Promise.allSettled(adds)) {
        if (result.status === 'fulfilled') jobs++;
        else if (result.reason instanceof InvalidTenantIdError) {
          this.logger.error(
            `${tenantLogFields()} @TenantCron "${data.name}": ${result.reason.message}`,
          );
        } else failure ??= result.reason;
      }
      cursor = page.nextCursor;
      // Every job of the pages so far is added: a later attempt starts after them. Not past a
      // page with a failed add, which that attempt must add again.
      if (cursor !== null && failure === undefined) await job.updateData({ ...data, cursor });
    } while (cursor !== null);
    this.directoryDown.delete(data.name);
    this.logMissed(data, plans);
    // Retried by BullMQ; the job ids make the jobs already added harmless.
    if (failure) throw failure;
    return { tenants, jobs };
  }

  /**
   * A directory that fails or stays silent mid fan-out: warned once per cron until a fan-out of
   * it reads the directory through again (each retry of an outage is not another line).
   */
  private directoryFailed(name: string, error: unknown): void {
    if (this.directoryDown.has(name)) return;
    this.directoryDown.add(name);
    this.logger.warn(
      `${tenantLogFields()} ${Messages.cronDirectoryFailed(name, error instanceof Error ? error.message : String(error))}`,
    );
  }

  private planFor(
    data: FanOutJobData,
    zone: string,
    plans: Map<string, RunPlan & { tenants: number }>,
  ) {
    let plan = plans.get(zone);
    if (!plan) {
      const planner = this.ticker.planner;
      const cron = planner.cronOf(data.cron, zone, hashSeedOf(data));
      const runs = planRuns(cron, {
        from: data.from,
        now: data.to,
        policy: data.missed,
        maxCatchUp: data.maxCatchUp,
        lateAfter: this.ticker.options.lateAfter,
      });
      // A fixed zone's driver planned its stored next run in that zone: one an earlier version
      // planned (`H` of the expression alone) runs, as the claim kept it. (A tenant-zone driver's
      // runs are each zone's own: its stored run is no run of a zone.)
      if (data.timezone !== 'tenant') {
        planner.keepUpgradedRun(runs, cron, zone, data.from, data.to);
      }
      plan = { ...runs, tenants: 0 };
      plans.set(zone, plan);
    }
    return plan;
  }

  /**
   * A fan-out of a `@TenantCron` this app does not declare: handed back for an instance that does
   * (a newer version beside this one in a rolling deploy), then, past that window, given up.
   */
  private async unknown(
    job: TenantJob<FanOutJobData>,
    token: string | undefined,
  ): Promise<{ tenants: number; jobs: number }> {
    const name = job.data.name;
    if (!this.handedBack.has(name)) {
      this.handedBack.add(name);
      this.logger.warn(
        `${tenantLogFields()} ${Messages.unknownCronHandedBack(name, UNKNOWN_CRON_HAND_BACK_MS)}`,
      );
    }
    await handBackUnknownCron(job, token);
    this.logger.warn(
      `${tenantLogFields()} ${Messages.unknownCronGivenUp(name, String(job.id), UNKNOWN_CRON_HAND_BACK_MS)}`,
    );
    return { tenants: 0, jobs: 0 };
  }

  private zoneOf(data: FanOutJobData, tenant: TenantRecord): string {
    if (data.timezone !== 'tenant') return data.timezone;
    const zone = tenant.timezone;
    if (zone === undefined || zone === null || zone === '') return 'UTC';
    if (typeof zone === 'string' && isValidTimezone(zone)) return zone;
    if (!this.warnedZones.has(String(zone))) {
      this.warnedZones.add(String(zone));
      this.logger.warn(
        `${tenantLogFields({ tenantId: tenant.id })} @TenantCron "${data.name}": ` +
          Messages.tenantZoneUnknown(tenant.id, String(zone)),
      );
    }
    return 'UTC';
  }

  private logMissed(data: FanOutJobData, plans: Map<string, RunPlan & { tenants: number }>) {
    for (const [zone, plan] of plans) {
      if (plan.missed === 0 || plan.tenants === 0) continue;
      this.logger.warn(
        `${tenantLogFields()} @TenantCron "${data.name}" (${zone}): ${plan.missed}${plan.missedExact ? '' : '+'} ` +
          `missed run(s) for each of ${plan.tenants} tenant(s); policy "${data.missed}" ` +
          `runs ${plan.caughtUp} of them`,
      );
    }
  }
}
