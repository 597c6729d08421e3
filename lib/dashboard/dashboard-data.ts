import { DeadLetters } from '../dead-letters/dead-letters.service';
import { TenantQueueInspector } from '../metrics/tenant-queue-inspector.service';
import { TenantQueueControls } from '../metrics/tenant-queue-state-source.interface';
import { TenantQueueStats } from '../metrics/tenant-queue-stats.interface';
import { TenantCronExplorer } from '../scheduler/tenant-cron.explorer';
import { TenantScheduler } from '../scheduler/tenant-scheduler';

/** Anything waiting, running or recorded in the window: the queue is one the tenant uses. */
function uses(stats: TenantQueueStats): boolean {
  const r = stats.results;
  return (
    stats.backlog > 0 ||
    stats.inFlight > 0 ||
    stats.deadLetters > 0 ||
    stats.lag.samples > 0 ||
    r.completed + r.failed + r.timedOut + r.cancelled + r.deadLettered > 0
  );
}

/**
 * The tenant view's data: only the queues (and pools) the tenant uses, each with the settings
 * the controls can edit there; its dead letters and schedules.
 */
export async function tenantDetail(
  inspector: TenantQueueInspector,
  deadLetters: DeadLetters,
  scheduler: TenantScheduler | undefined,
  controls: TenantQueueControls | undefined,
  crons: TenantCronExplorer | undefined,
  tenantId: string,
) {
  const all = await Promise.all(
    inspector.queueNames().map((queue) => inspector.getTenant(queue, tenantId)),
  );
  const [letters, schedules, cronViews] = await Promise.all([
    deadLetters.list(tenantId, { limit: 10 }),
    scheduler ? scheduler.list(tenantId) : Promise.resolve([]),
    crons ? crons.forTenant(tenantId) : Promise.resolve([]),
  ]);
  const used = all.filter(uses);
  const queues = await Promise.all(
    used.map(async (stats) => ({
      ...stats,
      settings: (await controls?.settings?.(stats.queue, stats.tenantId)) ?? null,
    })),
  );
  return {
    tenantId,
    windowMinutes: all[0]?.lag.windowMinutes ?? null,
    queues,
    otherQueues: all.length - used.length,
    deadLetters: {
      total: letters.total,
      items: letters.items.map((letter) => ({
        jobId: letter.jobId,
        queue: letter.queue,
        name: letter.name,
        reason: letter.reason,
        failedReason: letter.failedReason,
        attempts: letter.attempts,
        failedAt: letter.failedAt,
      })),
    },
    schedules: [
      ...schedules.map((schedule) => ({
        key: schedule.key,
        source: 'TenantScheduler',
        cron: schedule.cron,
        timezone: schedule.timezone,
        enabled: schedule.enabled,
        queue: schedule.job.queue,
        job: schedule.job.name,
        nextRunAt: schedule.nextRunAt,
      })),
      ...cronViews.map((cron) => ({
        key: cron.name,
        source: '@TenantCron',
        cron: cron.cron,
        timezone: cron.timezone,
        enabled: true,
        queue: cron.queue,
        job: cron.name,
        nextRunAt: cron.nextRunAt,
      })),
    ],
  };
}
