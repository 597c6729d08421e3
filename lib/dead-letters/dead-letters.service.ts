import { Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { TenantContext } from '../core/context/tenant-context';
import { TenantEnvelopeCodec } from '../core/envelope/tenant-envelope.codec';
import { InvalidJobIdError, TenantNotActiveError } from '../core/errors';
import { DeadLetterResolvedError } from './dead-letter-resolved.error';
import { DeadLetterNotFoundError } from './dead-letter-not-found.error';
import { InvalidDeadLetterQueryError } from './invalid-dead-letter-query.error';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { EnqueuedJob } from '../core/types/tenant-job.interface';
import { RUN_OPTIONS_KEY } from '../core/envelope/job-run-options';
import { Messages } from '../tenant-queue.messages';
import { TenantQueueRedis } from '../core/redis/tenant-queue.redis';
import { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { deadLetterOf } from './dead-letter.factory';
import {
  DeadLetter,
  DeadLetterListener,
  DeadLetterPage,
  DeadLetterQuery,
} from './dead-letter.interface';
import { DeadLettersScript } from './dead-letters.script';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { setReplayLink } from '../core/context/replay-link';
import { TenantJobRunner } from '../core/processor/tenant-job.runner';
import { TenantQueueLogger } from '../core/logging/tenant-queue-logger';
import { callListener, thrownText } from '../core/logging/call-listener';
import { isJobIdLookup, moduleJobOptions } from '../core/queues/job-id.check';
import { TenantPortUnavailableError, TenantStatusService } from '../guards';
import { isRecordOfAnother } from '../core/tenants/directory-lookup';

const MAX_LIMIT = 100;

function assertJobId(method: string, jobId: unknown): void {
  if (!isJobIdLookup(jobId)) throw new InvalidJobIdError(Messages.deadLetterJobId(method, jobId));
}

/**
 * Jobs that failed for good, kept per tenant: list, replay under the same tenant, purge, and
 * listen for new ones. Every call is scoped to the tenant id it is given; one tenant's dead
 * letters are unreachable through another's.
 * @publicApi
 */
@Injectable()
export class DeadLetters {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  private readonly listeners = new Set<DeadLetterListener>();
  /** Logs a listener's error, in the dead-lettered job's context. */
  private readonly listenerFailed = (error: unknown): void =>
    this.logger.error(`${tenantLogFields()} onDeadLetter listener threw: ${thrownText(error)}`);
  /** @internal */
  readonly script: DeadLettersScript;

  constructor(
    redis: TenantQueueRedis,
    private readonly registry: TenantQueueRegistry,
    private readonly codec: TenantEnvelopeCodec,
    private readonly context: TenantContext,
    private readonly status: TenantStatusService,
    private readonly runner: TenantJobRunner,
  ) {
    this.script = new DeadLettersScript(() => redis.client);
  }

  /** One tenant's dead letters, newest first, across every queue (or one). */
  async list(tenantId: string, page: DeadLetterQuery = {}): Promise<DeadLetterPage> {
    this.codec.assertTenantId(tenantId);
    const offset = page.offset ?? 0;
    const asked = page.limit ?? 20;
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw new InvalidDeadLetterQueryError(
        Messages.deadLetterPage('offset', offset, 'an integer >= 0'),
      );
    }
    if (!Number.isSafeInteger(asked) || asked < 1) {
      throw new InvalidDeadLetterQueryError(
        Messages.deadLetterPage('limit', asked, 'an integer >= 1'),
      );
    }
    const limit = Math.min(MAX_LIMIT, asked);
    const redis = this.script.raw;
    const heads: { definition: TenantQueueDefinition; jobId: string; score: number }[] = [];
    let total = 0;
    const definitions = this.definitions(page.queue);
    // One queue: the page itself. Several: each one's first offset + limit, merged by time.
    const from = definitions.length === 1 ? offset : 0;
    for (const definition of definitions) {
      const [index] = DeadLettersScript.tenantKeys(definition, tenantId);
      total += await redis.zcard(index);
      const flat: string[] = await redis.zrevrange(index, from, offset + limit - 1, 'WITHSCORES');
      for (let i = 0; i < flat.length; i += 2) {
        heads.push({ definition, jobId: flat[i], score: Number(flat[i + 1]) });
      }
    }
    heads.sort((a, b) => b.score - a.score);
    // One pipeline per queue (its keys share one slot), not a round trip per letter: a page of
    // 100 letters took 0.6-1 s on a busy Redis that way.
    const shown = heads.slice(offset - from, offset - from + limit);
    const byQueue = new Map<TenantQueueDefinition, string[]>();
    for (const head of shown) {
      const ids = byQueue.get(head.definition) ?? [];
      byQueue.set(head.definition, ids);
      ids.push(head.jobId);
    }
    const read = new Map<TenantQueueDefinition, (DeadLetter | undefined)[]>();
    await Promise.all(
      [...byQueue].map(async ([definition, ids]) =>
        read.set(definition, await this.readMany(definition, tenantId, ids)),
      ),
    );
    const items: DeadLetter[] = [];
    const at = new Map<TenantQueueDefinition, number>();
    for (const head of shown) {
      const i = at.get(head.definition) ?? 0;
      at.set(head.definition, i + 1);
      const letter = read.get(head.definition)![i];
      if (letter) items.push(letter);
    }
    return { items, total, offset, limit };
  }

  /** One dead letter of a tenant, or undefined. */
  async get(tenantId: string, jobId: string, queue?: string): Promise<DeadLetter | undefined> {
    this.codec.assertTenantId(tenantId);
    assertJobId('get', jobId);
    return (await this.find(tenantId, jobId, queue))?.letter;
  }

  /**
   * Enqueues the job again for the same tenant (same actor and correlation id, same run id; on a
   * fair queue the same lane and fair key; a fresh attempt count) and removes the dead letter,
   * and the failed job it recorded from BullMQ (so no `job.retry()` can run it a second time).
   * Refused with `TenantNotActiveError` when the `TenantDirectory` says the tenant is not active,
   * `TenantPortUnavailableError` when it throws or does not answer within `guards.portTimeoutMs`;
   * `DeadLetterNotFoundError` when the tenant has no such dead letter; `DeadLetterResolvedError`
   * when its job ran again by another path (BullMQ's `job.retry()`, bull-board's Retry) and
   * completed or is still on its way.
   */
  async replay(tenantId: string, jobId: string, queue?: string): Promise<EnqueuedJob> {
    this.codec.assertTenantId(tenantId);
    assertJobId('replay', jobId);
    const found = await this.find(tenantId, jobId, queue);
    if (!found) throw new DeadLetterNotFoundError(Messages.deadLetterNotFound(tenantId, jobId));
    await this.assertActive(tenantId, jobId);
    const { letter, definition } = found;
    await this.assertOpen(definition, letter);
    await this.retire(definition, letter);
    const replay = letter.replays + 1;
    // Through the queue the pool serves, so a tenant moved since goes to its current pool.
    const target = definition.poolOf ?? definition.name;
    const replayId = await this.replayIdOf(target, letter);
    const data = {
      ...letter.data,
      [RUN_OPTIONS_KEY]: { runId: letter.runId, timeoutMs: letter.timeoutMs, replay },
    };
    const { envelope } = letter;
    const opts = moduleJobOptions(
      Object.fromEntries(
        Object.entries({
          ...letter.opts,
          fairKey: envelope.fairKey,
          jobId: replayId,
        }).filter(([, value]) => value !== undefined),
      ),
    );
    const enqueued = await this.context.run(
      {
        tenantId,
        actor: { type: envelope.actorType, id: envelope.actorId },
        correlationId: envelope.correlationId,
        locale: envelope.locale,
        strategy: envelope.strategy,
      },
      () => {
        setReplayLink(letter.traceparent);
        return this.registry.getQueue(target).add(letter.name, data, opts);
      },
    );
    await this.script.remove(definition, tenantId, letter.jobId);
    return enqueued;
  }

  /**
   * The replay's job id: `<id>.r<n>` from the letter's replay count on, past the ids a job made
   * before the letter's failure holds in `target` or its pools (an earlier run the tenant added
   * under the id it reused): BullMQ would take the add for that job and run nothing, and the
   * letter would be gone. A job made since the failure under the id is this letter's replay by
   * another call at the same time, which the add joins, so the work runs once.
   */
  private async replayIdOf(target: string, letter: DeadLetter): Promise<string> {
    const base = letter.jobId.replace(/\.r\d+$/, '');
    const failedAt = Date.parse(letter.failedAt);
    const queues = this.registry
      .getQueueNames()
      .map((name) => this.registry.getQueue(name).definition)
      .filter((queue) => queue.name === target || queue.poolOf === target);
    const redis = this.script.raw;
    for (let replay = letter.replays + 1; ; replay++) {
      const id = `${base}.r${replay}`;
      // One read per queue: a pool's keys are in a cluster slot of their own.
      const made = await Promise.all(
        queues.map((queue) => redis.hget(DeadLettersScript.jobKey(queue, id), 'timestamp')),
      );
      if (made.every((at) => at === null || Number(at) >= failedAt)) return id;
    }
  }

  /**
   * Removes one dead letter of the tenant, or all of them (`jobId` left out; 1,000 a script
   * call); returns how many were removed. An empty `jobId` is refused (`InvalidJobIdError`), never taken as "all".
   */
  async purge(tenantId: string, jobId?: string, queue?: string): Promise<number> {
    this.codec.assertTenantId(tenantId);
    if (jobId !== undefined && !isJobIdLookup(jobId)) {
      throw new InvalidJobIdError(Messages.deadLetterPurgeId(jobId));
    }
    let removed = 0;
    for (const definition of this.definitions(queue)) {
      removed += await (jobId === undefined
        ? this.script.removeAll(definition, tenantId)
        : this.script.remove(definition, tenantId, jobId));
    }
    return removed;
  }

  /**
   * Calls `listener` once for every new dead letter (in the process that recorded it), inside the
   * dead letter's tenant context; for alerting. Returns a function that unsubscribes.
   */
  onDeadLetter(listener: DeadLetterListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * @internal Records a job that failed for good (idempotent: once per failure, whichever process
   * sees it first). `final` says the caller saw BullMQ give the job up.
   */
  async record(
    definition: TenantQueueDefinition,
    job: Job,
    final: boolean,
    error?: Error,
  ): Promise<DeadLetter | undefined> {
    const letter = deadLetterOf(job, this.codec, error);
    if (!letter || job.finishedOn === undefined) return undefined;
    const json = JSON.stringify(letter);
    const outcome = await this.script.record(
      definition,
      letter.tenantId,
      letter.jobId,
      job.finishedOn,
      json,
      final,
    );
    if (outcome !== 1) return undefined;
    this.logger.warn(
      `${tenantLogFields({ tenantId: letter.tenantId, jobId: letter.jobId, correlationId: letter.envelope.correlationId })} job ${letter.jobId} (${letter.queue}/${letter.name}) of tenant ${letter.tenantId} ` +
        `dead-lettered: ${letter.reason} after ${letter.attempts} attempt(s)`,
    );
    this.emit(job, letter);
    return letter;
  }

  /**
   * @internal Resolves the open dead letter of job `jobId`, if any, when the job completed (by
   * any path). `completed`: the caller saw it complete (its hash may already be removed).
   */
  async resolveJob(
    definition: TenantQueueDefinition,
    jobId: string,
    completed: boolean,
  ): Promise<boolean> {
    const tenantId: string | null = await this.script.raw.hget(
      DeadLettersScript.openKey(definition),
      jobId,
    );
    if (tenantId === null) return false;
    const resolved = (await this.script.resolve(definition, tenantId, jobId, completed)) === 1;
    if (resolved) {
      this.logger.log(
        `${tenantLogFields({ tenantId, jobId })} dead letter ${jobId} of tenant ${tenantId} on ` +
          `${definition.name} resolved: its job completed after a retry outside DeadLetters.replay`,
      );
    }
    return resolved;
  }

  /** @internal Resolves every open dead letter of the queue whose job has completed since. */
  async resolveOpen(definition: TenantQueueDefinition): Promise<number> {
    const redis = this.script.raw;
    let resolved = 0;
    let cursor = '0';
    do {
      const [next, flat]: [string, string[]] = await redis.hscan(
        DeadLettersScript.openKey(definition),
        cursor,
        'COUNT',
        200,
      );
      cursor = next;
      // One read of the page tells which letters may change: a job completed or gone. Only
      // those take the resolve script (which checks again, atomically); a letter whose job is
      // still failed, nearly all of them, costs no call (10,000 open letters were 10,000 script
      // calls a sweep, every 30 s in every process).
      const check = redis.pipeline();
      for (let i = 0; i < flat.length; i += 2) {
        check
          .zscore(DeadLettersScript.completedKey(definition), flat[i])
          .exists(DeadLettersScript.jobKey(definition, flat[i]));
      }
      const seen = flat.length ? ((await check.exec()) as [Error | null, unknown][]) : [];
      for (let i = 0; i < flat.length; i += 2) {
        const [completed, exists] = [seen[i], seen[i + 1]];
        const settled = completed[0] || exists[0] || completed[1] !== null || exists[1] === 0;
        if (!settled) continue;
        if ((await this.script.resolve(definition, flat[i + 1], flat[i], false)) === 1) resolved++;
      }
    } while (cursor !== '0');
    return resolved;
  }

  /** Refuses a replay of a letter whose job completed or runs again by another path. */
  private async assertOpen(definition: TenantQueueDefinition, letter: DeadLetter): Promise<void> {
    await this.resolveJob(definition, letter.jobId, false);
    const [, , resolvedKey] = DeadLettersScript.tenantKeys(definition, letter.tenantId);
    const [[, resolvedAt], [, exists], [, failed]] = (await this.script.raw
      .pipeline()
      .hget(resolvedKey, letter.jobId)
      .exists(DeadLettersScript.jobKey(definition, letter.jobId))
      .zscore(DeadLettersScript.failedKey(definition), letter.jobId)
      .exec()) as [Error | null, unknown][];
    if (resolvedAt !== null) {
      throw new DeadLetterResolvedError(
        'completed',
        Messages.deadLetterResolved(letter.tenantId, letter.jobId, Number(resolvedAt)),
      );
    }
    if (exists === 1 && failed === null) {
      throw new DeadLetterResolvedError(
        'retrying',
        Messages.deadLetterRetrying(letter.tenantId, letter.jobId),
      );
    }
  }

  /**
   * Takes the letter's failed job out of BullMQ before its replay is added: left in the failed
   * set, a later `job.retry()` or bull-board's Retry (one job, or all failed) would run the work
   * once more beside the replay. Only the failure this letter recorded (its `tqDlq` mark) is
   * removed, never a later job that took the id; a job that is running again refuses the replay.
   * A flow's child stays: BullMQ would release its parent as if the child were done.
   */
  private async retire(definition: TenantQueueDefinition, letter: DeadLetter): Promise<void> {
    const [mark, parentKey]: (string | null)[] = await this.script.raw.hmget(
      DeadLettersScript.jobKey(definition, letter.jobId),
      'tqDlq',
      'parentKey',
    );
    if (mark === null || Number(mark) !== Date.parse(letter.failedAt) || parentKey) return;
    const queue = this.registry.getQueue(definition.name).bullQueue;
    if ((await queue.remove(letter.jobId, { removeChildren: false })) !== 1) {
      throw new DeadLetterResolvedError(
        'retrying',
        Messages.deadLetterRetrying(letter.tenantId, letter.jobId),
      );
    }
  }

  /**
   * Calls the listeners in the job's tenant context, as `@OnTenantWorkerEvent` and
   * `JobCancellations` listeners are: its tenant, actor and correlation id, `tenantLogFields()`
   * naming the job, and the app's nestjs-cls setup (`CLS_ID`, `cls.setup`, proxy providers).
   */
  private emit(job: Job, letter: DeadLetter): void {
    if (this.listeners.size === 0) return;
    this.runner.runInJobContext(job, () => {
      for (const listener of this.listeners) callListener(listener, letter, this.listenerFailed);
    });
  }

  private async assertActive(tenantId: string, jobId: string): Promise<void> {
    let tenant;
    try {
      // With the guards' deadline: a directory that is down or silent is an outage, not a hang.
      tenant = await this.status.lookup(tenantId);
    } catch (error) {
      if (!(error instanceof TenantPortUnavailableError)) throw error;
      const cause = error.cause;
      const why =
        cause === undefined
          ? 'no answer within guards.portTimeoutMs'
          : cause instanceof Error
            ? cause.message
            : String(cause);
      throw new TenantPortUnavailableError(Messages.replayTenantUnavailable(tenantId, jobId, why), {
        cause: error,
      });
    }
    const verdict = this.status.verdictOf(tenantId, tenant);
    if (!verdict.allowed) {
      throw new TenantNotActiveError(
        tenant && isRecordOfAnother(tenantId, tenant)
          ? verdict.message
          : Messages.replayTenantNotActive(tenantId, tenant ? tenant.status : 'unknown'),
      );
    }
  }

  private async find(tenantId: string, jobId: string, queue?: string) {
    for (const definition of this.definitions(queue)) {
      const letter = await this.read(definition, tenantId, jobId);
      if (letter) return { letter, definition };
    }
    return undefined;
  }

  private async read(
    definition: TenantQueueDefinition,
    tenantId: string,
    jobId: string,
  ): Promise<DeadLetter | undefined> {
    return (await this.readMany(definition, tenantId, [jobId]))[0];
  }

  /** Letters of one queue and tenant by job id, in one pipeline (undefined where none). */
  private async readMany(
    definition: TenantQueueDefinition,
    tenantId: string,
    jobIds: string[],
  ): Promise<(DeadLetter | undefined)[]> {
    const [, entries, resolved] = DeadLettersScript.tenantKeys(definition, tenantId);
    const pipeline = this.script.raw.pipeline();
    for (const jobId of jobIds) pipeline.hget(entries, jobId).hget(resolved, jobId);
    const replies = (await pipeline.exec()) as [Error | null, string | null][];
    return jobIds.map((_, i) => {
      const [error, json] = replies[2 * i];
      if (error) throw error;
      if (!json) return undefined;
      const letter = JSON.parse(json) as DeadLetter;
      const resolvedAt = replies[2 * i + 1][1];
      if (resolvedAt !== null) letter.resolvedAt = new Date(Number(resolvedAt)).toISOString();
      // Belt and braces: an entry is only ever served to the tenant it was written for.
      return letter.tenantId === tenantId ? letter : undefined;
    });
  }

  private definitions(queue?: string): TenantQueueDefinition[] {
    const names = queue === undefined ? this.registry.getQueueNames() : [queue];
    return names.map((name) => this.registry.getQueue(name).definition);
  }
}
