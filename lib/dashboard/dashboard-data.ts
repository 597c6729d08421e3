import { DeadLetters } from '../dead-letters';
import { TenantQueueInspector, TenantQueueControls, TenantQueueStats } from '../metrics';
import { TenantCronExplorer, TenantScheduler } from '../scheduler';
import { TenantTiers } from '../core/tenants/tenant-tiers.service';

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
  tiers: TenantTiers,
  tenantId: string,
) {
  const all = await Promise.all(
    inspector.queueNames().map((queue) => inspector.getTenant(queue, tenantId)),
  );
  const [letters, schedules, cronViews, tier, ownZone] = await Promise.all([
    deadLetters.list(tenantId, { limit: 10 }),
    scheduler ? scheduler.list(tenantId) : Promise.resolve([]),
    crons ? crons.forTenant(tenantId) : Promise.resolve([]),
    tierOf(tiers, tenantId),
    crons ? crons.tenantZone(tenantId).catch(() => null) : Promise.resolve(null),
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
    tier,
    deadLetters: {
      total: letters.total,
      items: letters.items.map((letter) => ({
        jobId: letter.jobId,
        queue: letter.queue,
        name: letter.name,
        reason: letter.reason,
        failedReason: letter.failedReason,
        attempts: letter.attempts,
        enqueuedAt: letter.envelope?.enqueuedAt ?? null,
        startedAt: letter.startedAt ?? null,
        failedAt: letter.failedAt,
      })),
    },
    schedules: [
      ...schedules.map((schedule) => ({
        key: schedule.key,
        source: 'TenantScheduler',
        cron: schedule.cron,
        timezone: schedule.timezone,
        zone: schedule.timezone === 'tenant' ? ownZone : (schedule.timezone ?? 'UTC'),
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
        zone: cron.zone,
        enabled: true,
        queue: cron.queue,
        job: cron.name,
        nextRunAt: cron.nextRunAt,
      })),
    ],
  };
}

/**
 * The tenant's tier as the dashboard shows and edits it (null when no tiers are defined, or the
 * directory cannot answer now): the one it runs with, the directory record's, whether a run-time
 * assignment overrides the record, and the tiers it may be given.
 */
async function tierOf(tiers: TenantTiers, tenantId: string) {
  const names = tiers.tierNames();
  if (names.length === 0) return null;
  try {
    const profile = await tiers.profile(tenantId);
    const overridden = profile.directoryTier !== undefined;
    return {
      current: profile.tier ?? null,
      directory: overridden ? profile.directoryTier : (profile.tier ?? null),
      overridden,
      names,
    };
  } catch {
    return null;
  }
}
