import { BadRequestException, NotFoundException, NotImplementedException } from '@nestjs/common';
import type { Job } from 'bullmq';
import { parseCancelReason } from '../core/errors';
import { DeadLetterNotFoundError, DeadLetters } from '../dead-letters';
import { TenantStatusService } from '../guards';
import {
  TenantQueueInspector,
  TenantQueueControls,
  TenantQueueSettings,
  TenantQueueSettingsChange,
  TenantQueueStateSource,
} from '../metrics';
import { Messages } from '../tenant-queue.messages';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { TenantTiers } from '../core/tenants/tenant-tiers.service';
import { settlesWithin } from '../core/redis/tenant-queue.redis';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';

const SETTING_FIELDS = ['weight', 'concurrency', 'rateLimit'];

/**
 * The dashboard's actions, each through the module's own API (which checks its input and
 * answers with a typed error the page shows as is). The controller checks the guard and the
 * action header first.
 */
export class DashboardActions {
  constructor(
    private readonly inspector: TenantQueueInspector,
    private readonly deadLetters: DeadLetters,
    private readonly registry: TenantQueueRegistry,
    private readonly controls: TenantQueueControls | undefined,
    private readonly stateSource: TenantQueueStateSource | undefined,
    private readonly tiers: TenantTiers,
    private readonly status: TenantStatusService,
    /** How long an action's answer waits for it before saying it goes on (half the route's bound). */
    private readonly answerWithinMs: number,
  ) {}

  private readonly logger = new TenantQueueLogger('TenantQueueDashboard');

  /**
   * Pause/resume only where the queue has a fair gate (a plain queue cannot hold one tenant). A
   * pause returns once the tenant's jobs queued by turn are back in the gate, 1,000 a call: for a
   * flood of 100,000 that is seconds, past the route's bound (see `goesOn`).
   */
  async pauseOrResume(action: 'pause' | 'resume', queue: string, tenantId: string) {
    await this.inspector.getTenant(queue, tenantId);
    if (!this.fair(queue)) throw new BadRequestException(Messages.dashboardNotFair(queue, action));
    const controls = this.controls!;
    const verb = action === 'pause' ? 'Paused' : 'Resumed';
    const pending = await this.goesOn(
      controls[action](queue, tenantId),
      tenantId,
      `${action} on ${queue}`,
      async () => (await controls.settings?.(queue, tenantId))?.paused === (action === 'pause'),
    );
    if (!pending) return { queue, tenantId, action, message: `${verb} ${tenantId} on ${queue}` };
    const goesOn = Messages.dashboardActionGoesOn(action === 'pause');
    const message = `${verb} ${tenantId} on ${queue}: ${goesOn}`;
    return { queue, tenantId, action, pending, message };
  }

  /** A cap or a rate limit takes the tenant's queued jobs back as a pause does (see `goesOn`). */
  async configure(queue: string, tenantId: string, body: unknown) {
    await this.inspector.getTenant(queue, tenantId);
    if (!this.fair(queue)) throw new BadRequestException(Messages.dashboardNotFair(queue, 'edit'));
    const controls = this.controls;
    if (!controls?.configure) {
      throw new NotImplementedException(Messages.dashboardNoSettings());
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw new BadRequestException(Messages.dashboardSettingsBody(SETTING_FIELDS));
    }
    const extra = Object.keys(body).find((key) => !SETTING_FIELDS.includes(key));
    if (extra !== undefined || Object.keys(body).length === 0) {
      throw new BadRequestException(Messages.dashboardSettingsBody(SETTING_FIELDS));
    }
    const change = body as TenantQueueSettingsChange;
    const pending = await this.goesOn(
      controls.configure(queue, tenantId, change),
      tenantId,
      `settings on ${queue}`,
      async () => inForce(change, await controls.settings?.(queue, tenantId)),
    );
    const settings = await controls.settings?.(queue, tenantId);
    const saved = `Saved the settings of ${tenantId} on ${queue}`;
    if (!pending) return { queue, tenantId, settings, message: saved };
    return {
      queue,
      tenantId,
      settings,
      pending,
      message: `${saved}: ${Messages.dashboardActionGoesOn(true)}`,
    };
  }

  /**
   * Whether `work` goes on past the answer: it has not ended within half the route's bound, and
   * `applied()` says its change is in force (the gate applied it; what remains is taking the
   * tenant's jobs queued by turn back into the gate, 1,000 a call). It then goes on in this
   * process, a failure logged. Otherwise the route waits for it, and its error is the answer's (a
   * Redis that is away: 503 at the bound).
   */
  private async goesOn(
    work: Promise<void>,
    tenantId: string,
    what: string,
    applied: () => Promise<boolean>,
  ): Promise<boolean> {
    if ((await settlesWithin(work, this.answerWithinMs)) || !(await applied())) {
      await work;
      return false;
    }
    work.catch((error: unknown) =>
      this.logger.warn(`${tenantLogFields({ tenantId })} dashboard ${what}: ${String(error)}`),
    );
    return true;
  }

  /** Assigns a tier at run time (`{ tier: 'pro' }`), or goes back to the directory's (`null`). */
  async setTier(tenantId: string, body: unknown) {
    const keys = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
    const tier = (body as { tier?: unknown } | undefined)?.tier;
    if (keys.length !== 1 || keys[0] !== 'tier' || (tier !== null && typeof tier !== 'string')) {
      throw new BadRequestException(Messages.dashboardTierBody(this.tiers.tierNames()));
    }
    await this.tiers.setTier(tenantId, tier);
    const profile = await this.tiers.profile(tenantId);
    const message =
      tier === null
        ? `${tenantId} is back on its directory tier (${profile.tier ?? 'none'})`
        : `Assigned tier ${tier} to ${tenantId}`;
    return { tenantId, tier: profile.tier ?? null, message };
  }

  async replay(queue: string, tenantId: string, jobId: string) {
    const enqueued = await this.deadLetters.replay(tenantId, jobId, queue);
    return { queue, tenantId, job: enqueued, message: `Replayed ${jobId} as ${enqueued.id}` };
  }

  async purge(queue: string, tenantId: string, jobId?: string) {
    const removed = await this.deadLetters.purge(tenantId, jobId, queue);
    // One letter the tenant does not have (another tenant's, or none): 404, as every route says.
    if (jobId !== undefined && removed === 0) {
      throw new DeadLetterNotFoundError(Messages.deadLetterNotFound(tenantId, jobId));
    }
    return { queue, tenantId, removed, message: `Purged ${removed} dead letter(s) of ${tenantId}` };
  }

  /**
   * Retries a job BullMQ holds as failed. On a fair queue that is a replay of its dead letter,
   * so the run goes through the gate again (cap, rate limit, turn) instead of around it.
   */
  async retry(queue: string, tenantId: string, jobId: string) {
    const bull = this.registry.getQueue(queue).bullQueue;
    // State first: a job found failed is read after its failure, with its reason (a cancellation
    // is refused below, not replayed).
    const state = await bull.getJobState(jobId);
    const job = (await bull.getJob(jobId)) as Job | undefined;
    // Another tenant's job answers as one that does not exist: nothing of it is shown or done.
    if (!job || this.inspector.tenantOfJob(job) !== tenantId) {
      throw new NotFoundException(Messages.dashboardNoSuchJob(queue, tenantId, jobId));
    }
    if (state !== 'failed') {
      throw new BadRequestException(Messages.dashboardRetryNotFailed(queue, jobId, state));
    }
    if (this.fair(queue)) {
      const cancelled = parseCancelReason(job.failedReason);
      if (cancelled) {
        throw new BadRequestException(Messages.dashboardRetryCancelled(queue, jobId, cancelled));
      }
      return this.replay(queue, tenantId, jobId);
    }
    // Its tenant's worker would cancel it unrun (TENANT_SUSPENDED, ...): say so, move nothing.
    const verdict = await this.status.check(tenantId);
    if (!verdict.allowed) {
      throw new BadRequestException(
        Messages.dashboardRetryTenantNotActive(queue, jobId, tenantId, verdict.reason),
      );
    }
    try {
      await job.retry('failed');
    } catch (error) {
      // Another retry (a second click, another operator) moved it first: BullMQ's script
      // refuses; answer as for a job found not failed.
      const now = await job.getState();
      if (now === 'failed') throw error;
      throw new BadRequestException(Messages.dashboardRetryNotFailed(queue, jobId, now));
    }
    return { queue, tenantId, jobId, message: `Retrying ${jobId}` };
  }

  private fair(queue: string): boolean {
    return this.stateSource?.handles(queue) ?? false;
  }
}

/**
 * Whether `settings` show every value `change` sets (one that goes back to a default, `null`,
 * cannot be told from the settings: not in force as far as the answer knows).
 */
function inForce(change: TenantQueueSettingsChange, settings: TenantQueueSettings | undefined) {
  if (!settings) return false;
  const { weight, concurrency, rateLimit } = change;
  if (weight !== undefined && weight !== settings.weight) return false;
  if (concurrency !== undefined && concurrency !== settings.concurrency) return false;
  if (rateLimit === undefined) return true;
  if (rateLimit === null || rateLimit === false) return rateLimit === settings.rateLimit;
  const now = settings.rateLimit;
  return now !== false && now.max === rateLimit.max && now.per === rateLimit.per;
}
