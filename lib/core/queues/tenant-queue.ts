import type { Queue } from 'bullmq';
import { TenantContext } from '../context/tenant-context';
import { JobTenantState, TenantState } from '../context/tenant-state';
import { TenantEnvelopeCodec } from '../envelope/tenant-envelope.codec';
import { InvalidJobOptionsError, JobIdTakenError, MissingTenantError } from '../errors';
import { TenantQueueDefinition } from '../types/queue-definition.interface';
import { EnqueuedJob } from '../types/tenant-job.interface';
import { ENVELOPE_KEY } from '../../tenant-queue.constants';
import { Messages } from '../../tenant-queue.messages';
import { EnqueueBound, EnqueueCall } from './enqueue-bound';
import {
  JobDispatcher,
  PreparedJob,
  TenantJobOptions,
  assertParentsExist,
} from './job-dispatcher.interface';
import { JobIdOwners, newClaimToken } from './job-id-owners.script';
import { jobOptionsProblem } from './job-options.check';
import { assertCallerJobId, tenantDeduplicationId } from './job-id.check';
import { newJobId } from './job-id';
import { payloadJson, plainPayloadCopy } from './payload.check';

/** A state whose tenant is known (`prepare` checks `tenantId` first): what an envelope is made of. */
type TenantEnvelopeState = TenantState & { tenantId: string };

/**
 * One job of `TenantQueue.addBulk(jobs)`: its name, data and options.
 * @publicApi
 */
export interface TenantBulkJob<T extends object = Record<string, unknown>> {
  name: string;
  data: T;
  opts?: TenantJobOptions;
}

/**
 * @internal Picks the queue that takes each prepared job: one of this queue's dedicated pools, or
 * the queue itself (the shared pool). `ownIds` are the job ids the caller chose.
 */
export type TenantJobRouter = (
  jobs: PreparedJob[],
  ownIds: ReadonlySet<string>,
) => Promise<TenantQueue<any>[]>;

/** Prepared jobs whose id the caller chose (deterministic ids: cron, schedules, `jobId`). */
const callerIds = new WeakSet<PreparedJob>();

/** @internal Whether the caller chose the job's id (else the module drew it: `newJobId`). */
export function hasCallerJobId(job: PreparedJob): boolean {
  return callerIds.has(job);
}

/**
 * Producer for one queue. Every job gets the `_tenant` envelope of the current context (HTTP
 * request or running job); a tenant-scoped job without a tenant is refused before anything is
 * written. Inject with `@InjectTenantQueue(name)`.
 * @publicApi
 */
export class TenantQueue<T extends object = Record<string, unknown>> {
  constructor(
    readonly definition: TenantQueueDefinition,
    /** The underlying BullMQ queue, for reads (`getJob`, `getJobCounts`, ...). */
    readonly bullQueue: Queue,
    private readonly context: TenantContext,
    private readonly codec: TenantEnvelopeCodec,
    /** Resolved on first write, so features that register late still claim the queue. */
    private readonly dispatcherOf: () => JobDispatcher,
    /** Told about every write after dispatch (visibility counters). */
    private readonly onWritten?: (jobs: PreparedJob[]) => void,
    /** Set on a queue with dedicated pools: sends each job to its tenant's pool. */
    private readonly router?: TenantJobRouter,
    /** Who uses each caller-chosen job id (one tenant per id); none under the testing module. */
    private readonly owners?: JobIdOwners,
    /** How long an enqueue may wait for Redis; unbounded when absent. */
    private readonly bound?: EnqueueBound,
    /**
     * The features' checks of each job (lanes, what a fair queue refuses), before any write:
     * asked at the first job, once Nest has built the features.
     */
    private readonly jobCheckOf?: () => ((job: PreparedJob) => void) | undefined,
  ) {}

  private dispatcher: JobDispatcher | undefined;
  /** `jobCheckOf()`'s answer: null when no feature checks this queue's jobs. */
  private jobCheck: ((job: PreparedJob) => void) | null | undefined = undefined;

  get name(): string {
    return this.definition.name;
  }

  /**
   * Enqueues a job for the tenant of the current context. On a queue with pools, the job goes to
   * its tenant's pool; `queueName` of the result names the pool.
   */
  async add(name: string, data: T, opts?: TenantJobOptions): Promise<EnqueuedJob> {
    const [job] = await this.write([this.prepare(name, data, opts, this.current())]);
    return job;
  }

  /**
   * Enqueues several jobs, all or none: every check (payload, options, tenant, lane, job ids,
   * routing to pools, the dispatcher's own) runs for every job before the first is written.
   */
  async addBulk(jobs: TenantBulkJob<T>[]): Promise<EnqueuedJob[]> {
    const state = this.current();
    if (!Array.isArray(jobs)) throw this.notJobs('jobs', jobs);
    return this.write(
      jobs.map((job, i) => {
        if (job === null || typeof job !== 'object') throw this.notJobs(`jobs[${i}]`, job);
        return this.prepare(job.name, job.data, job.opts, state);
      }),
    );
  }

  private notJobs(what: string, value: unknown): InvalidJobOptionsError {
    return new InvalidJobOptionsError(what, Messages.addBulkNotJobs(this.name, what, value));
  }

  /**
   * Enqueues system work for a named tenant outside a request (cron, back-office scripts). The
   * actor is `system`; the correlation id of the current context is kept when there is one.
   */
  async addForTenant(
    tenantId: string,
    name: string,
    data: T,
    opts?: TenantJobOptions,
  ): Promise<EnqueuedJob> {
    this.codec.assertTenantId(tenantId);
    const state: TenantState = {
      tenantId,
      actor: { type: 'system' },
      correlationId: this.context.state()?.correlationId,
      strategy: 'system',
    };
    const [job] = await this.write([this.prepare(name, data, opts, state)]);
    return job;
  }

  /**
   * @internal Runs the checks `addForTenant` runs before its write (payload, options, job id, the
   * features' own) and writes nothing: `TenantScheduler.upsert` refuses a job that every
   * occurrence would fail to enqueue.
   */
  checkForTenant(tenantId: string, name: string, data: T, opts?: TenantJobOptions): void {
    this.codec.assertTenantId(tenantId);
    this.prepare(name, data, opts, { tenantId, actor: { type: 'system' }, strategy: 'system' });
  }

  private current(): TenantState | undefined {
    const state = this.context.state();
    if (state?.tenantId !== undefined) this.codec.assertTenantId(state.tenantId);
    if (state?.envelope && state.tenantId) return { ...state, strategy: 'inherited' };
    return state;
  }

  private prepare(
    name: string,
    data: T,
    opts: TenantJobOptions | undefined,
    state: TenantState | undefined,
  ): PreparedJob {
    if (typeof name !== 'string') {
      throw new InvalidJobOptionsError('name', Messages.jobNameNotString(this.name, name));
    }
    const payload = plainPayloadCopy(this.name, name, data);
    const tenantId = state?.tenantId;
    const scoped = this.definition.tenantScoped && !this.definition.systemJobs.has(name);
    if (tenantId === undefined && scoped) {
      throw new MissingTenantError(
        state instanceof JobTenantState && state.ended
          ? Messages.missingTenantAfterJob(this.name, name, state.jobId)
          : Messages.missingTenant(this.name, name),
      );
    }
    if (opts?.jobId != null) assertCallerJobId(this.name, name, opts, opts.jobId);
    const jobId = opts?.jobId ?? newJobId();
    const prepared: PreparedJob = {
      name,
      data: payload,
      opts: { ...this.definition.defaultJobOptions, ...opts, jobId },
      tenantId,
    };
    // The features' checks (lanes, fair keys, what a fair queue refuses), before the envelope
    // takes the job's fair key.
    if (this.jobCheck === undefined) this.jobCheck = this.jobCheckOf?.() ?? null;
    this.jobCheck?.(prepared);
    // What can fail to serialise (a BigInt, a cycle) is the caller's part: checked before the
    // envelope (the module's, always plain JSON) joins it, so the check reads the smaller object.
    const callerJson = payloadJson(this.name, name, payload);
    if (tenantId !== undefined) {
      payload[ENVELOPE_KEY] = this.codec.create(state as TenantEnvelopeState, opts?.fairKey);
    }
    if (opts !== undefined || prepared.opts.sizeLimit !== undefined) {
      // `sizeLimit` (the call's or the queue's defaultJobOptions') is checked against the
      // payload as stored, envelope included.
      const stored = prepared.opts.sizeLimit === undefined ? callerJson : JSON.stringify(payload);
      this.assertOptions(name, prepared.opts, stored);
    }
    const dedup = prepared.opts.deduplication;
    if (dedup !== undefined) {
      prepared.opts.deduplication = { ...dedup, id: tenantDeduplicationId(tenantId, dedup.id) };
    }
    if (opts?.jobId != null) callerIds.add(prepared);
    return prepared;
  }

  /** Refuses what BullMQ would refuse now or later. */
  private assertOptions(name: string, opts: PreparedJob['opts'], json: string): void {
    const problem = jobOptionsProblem(opts, json);
    if (problem) {
      throw new InvalidJobOptionsError(
        problem.option,
        Messages.invalidJobOption(this.name, name, problem.option, problem.why),
      );
    }
  }

  private write(jobs: PreparedJob[]): Promise<EnqueuedJob[]> {
    if (!this.bound) return this.writeChecked(jobs, undefined);
    return this.bound.run(this.name, (call) => this.writeChecked(jobs, call));
  }

  /**
   * Claims the caller-chosen ids, then writes; a call refused after its claim (a full backlog,
   * a pool's refusal, Redis gone) releases the ids its claim created, so none is held for a job
   * that does not exist.
   */
  private async writeChecked(
    jobs: PreparedJob[],
    call: EnqueueCall | undefined,
  ): Promise<EnqueuedJob[]> {
    const own = this.owners ? jobs.filter((job) => callerIds.has(job)) : [];
    if (own.length === 0) return this.writeClaimed(jobs, call);
    const token = newClaimToken();
    call?.send();
    let taken: PreparedJob | undefined;
    try {
      taken = await this.owners!.claim(own, token);
    } catch (error) {
      this.owners!.release(own, token);
      throw error;
    }
    if (taken) {
      // A bulk claims 500 ids a call: the chunks before the refused one hold their claims.
      this.owners!.release(own, token);
      throw new JobIdTakenError(
        this.name,
        taken.opts.jobId,
        Messages.jobIdTaken(this.name, taken.opts.jobId),
      );
    }
    try {
      call?.live();
      return await this.writeClaimed(jobs, call);
    } catch (error) {
      this.owners!.release(own, token);
      throw error;
    }
  }

  private async writeClaimed(
    jobs: PreparedJob[],
    call: EnqueueCall | undefined,
  ): Promise<EnqueuedJob[]> {
    if (!this.router) {
      await call?.ready([this.bullQueue]);
      await this.validateHere(jobs);
      return this.writeHere(jobs, call);
    }
    const own = jobs.filter((job) => callerIds.has(job)).map((job) => job.opts.jobId);
    const targets = await this.router(jobs, new Set(own));
    const groups = new Map<TenantQueue<any>, PreparedJob[]>();
    targets.forEach((queue, i) => {
      const group = groups.get(queue) ?? [];
      group.push(jobs[i]);
      groups.set(queue, group);
    });
    // Every pool's checks before any pool's write.
    await call?.ready([...groups.keys()].map((queue) => queue.bullQueue));
    for (const [queue, group] of groups) await queue.validateHere(group);
    const written = new Map<PreparedJob, EnqueuedJob>();
    // Each pool is its own queue (own hash slot), so a call spanning pools is one write per pool;
    // wait for all of them before reporting, so a failure never hides a write still in flight.
    const results = await Promise.allSettled(
      [...groups].map(async ([queue, group]) => {
        const enqueued = await queue.writeHere(group, call);
        group.forEach((job, i) => written.set(job, enqueued[i]));
      }),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return jobs.map((job) => written.get(job)!);
  }

  private async validateHere(jobs: PreparedJob[]): Promise<void> {
    this.dispatcher ??= this.dispatcherOf();
    // A fair queue's features refuse `parent` when the job is prepared, so none reaches here.
    await assertParentsExist(this.bullQueue, jobs);
    await this.dispatcher.validate?.(jobs);
  }

  private async writeHere(
    jobs: PreparedJob[],
    call: EnqueueCall | undefined,
  ): Promise<EnqueuedJob[]> {
    this.dispatcher ??= this.dispatcherOf();
    call?.send(jobs.length);
    await this.dispatcher.dispatch(this.bullQueue, jobs);
    this.onWritten?.(jobs);
    return jobs.map((job) => ({
      id: job.opts.jobId,
      name: job.name,
      queueName: this.name,
      tenantId: job.tenantId,
    }));
  }
}
