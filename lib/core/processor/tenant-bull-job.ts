import { Job, UnrecoverableError, Worker } from 'bullmq';
import type { QueueBase } from 'bullmq';
import { wakeWorkers } from '../bullmq/bullmq-seam';
import { outsideTenantContext } from '../context/outside-tenant-context';
import { Messages } from '../../tenant-queue.messages';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { ENVELOPE_KEY } from '../../tenant-queue.constants';
import { JobRunOptions, RUN_OPTIONS_KEY, RUN_OPTIONS_OF } from '../envelope/job-run-options';

/**
 * @internal The errors BullMQ met storing a handler's result (JSON cannot hold it), which the job
 * fails with a reason of its own: BullMQ emits each as a worker `'error'` first, with no job in it,
 * and the worker's log leaves those out (the job's failure and dead letter say it, with the job).
 */
export const UNSTORABLE_RESULT_ERRORS = new WeakSet<object>();

/**
 * @internal The job class of the module's workers. What the runner gives each job (its envelope,
 * run id, run options and what `updateData` must write back) lives in declared fields, so every
 * job keeps the one hidden class of this class: no `defineProperty`, no closure per job.
 */
export class TenantBullJob<T = any, R = any, N extends string = string> extends Job<T, R, N> {
  /** The validated envelope (`TenantJob.tenant`); undefined for a system job without a tenant. */
  tenant: TenantEnvelope | undefined = undefined;
  /** `TenantJob.runId`. */
  runId: string | undefined = undefined;
  /** The `_run` options taken from the data. */
  runOptions: JobRunOptions | undefined = undefined;
  /** The raw `_tenant` and `_run` values detached from the data, which `updateData` keeps. */
  keptEnvelope: unknown = undefined;
  keptRunOptions: unknown = undefined;
  /**
   * Whether the handler moved this attempt's job itself (to delayed, wait or waiting-children):
   * only then does an error named as BullMQ's `DelayedError` & co. mean what BullMQ reads in it.
   */
  moved = false;

  override async moveToDelayed(timestamp: number, token?: string): Promise<void> {
    await super.moveToDelayed(timestamp, token);
    this.moved = true;
  }

  /**
   * BullMQ's move back to `wait` (the handler's own, or the worker's after a `RateLimitError`),
   * then, for a job with a priority, the marker BullMQ leaves out there (see `wakeWorkers`): a
   * worker blocked waiting for jobs takes it at once, not 5-10 s later. A wake that fails costs
   * that delay, not the job (it is back in `prioritized`), so its error is not the move's.
   */
  override async moveToWait(token?: string): Promise<number> {
    const result = await super.moveToWait(token);
    this.moved = true;
    if (this.priority > 0) {
      await wakeWorkers(this.queue as unknown as QueueBase).catch(() => undefined);
    }
    return result;
  }

  override async moveToWaitingChildren(
    token: string,
    opts?: Parameters<Job['moveToWaitingChildren']>[1],
  ): Promise<boolean> {
    const moved = await super.moveToWaitingChildren(token, opts);
    if (moved) this.moved = true;
    return moved;
  }

  /** Writes `data` as the new payload, keeping the envelope and run options in Redis. */
  override async updateData(data: T): Promise<void> {
    if (this.keptEnvelope === undefined && this.keptRunOptions === undefined) {
      return super.updateData(data);
    }
    await super.updateData(withKept(data, this.keptEnvelope, this.keptRunOptions) as T);
    this.data = data;
  }

  /**
   * BullMQ's failure, where the failure is BullMQ refusing the handler's result (JSON cannot hold
   * a `BigInt` or a cycle): the job fails for good, since a retry would run the handler again for
   * the same unstorable result. BullMQ's `moveToCompleted` keeps the result in `returnvalue`
   * before it tries to store it (bullmq 5 and 6), so only a failing job pays this check.
   */
  override moveToFailed<E extends Error>(err: E, token: string, fetchNext?: boolean) {
    if (this.returnvalue !== undefined && !(err instanceof UnrecoverableError)) {
      const why = unstorable(this.returnvalue);
      if (why !== undefined) {
        UNSTORABLE_RESULT_ERRORS.add(err);
        const refused = new UnrecoverableError(
          Messages.unstorableResult(this.queueName, this.name, why),
        );
        return super.moveToFailed(refused as unknown as E, token, fetchNext);
      }
    }
    return super.moveToFailed(err, token, fetchNext);
  }

  /** BullMQ's own JSON of the job, with `tenant` and `runId` but not the runner's internals. */
  override toJSON() {
    const json = super.toJSON();
    const fields = json as unknown as Record<string, unknown>;
    delete fields.runOptions;
    delete fields.keptEnvelope;
    delete fields.keptRunOptions;
    delete fields.moved;
    return json;
  }
}

/** @internal A BullMQ worker whose jobs are `TenantBullJob`s. */
export class TenantWorker<T = any, R = any, N extends string = string> extends Worker<T, R, N> {
  protected override get Job(): typeof Job {
    return TenantBullJob as typeof Job;
  }

  /**
   * Starts the main loop outside any tenant context, whoever calls it: BullMQ's `resume()` calls
   * `run()`, and the loop it starts is the context of every worker event and of the module's
   * worker hooks (their listeners, log lines). Each job opens its own context anyway.
   */
  override run(): Promise<void> {
    return outsideTenantContext(() => super.run());
  }
}

/**
 * @internal Makes a BullMQ worker the module adopted (`@nestjs/bullmq`'s, `TenantBullMqModule`)
 * create `TenantBullJob`s from then on, as a `TenantWorker` does: BullMQ takes the class of every
 * job it fetches from the worker's `Job` getter (`createJob`, bullmq 5 and 6). Its jobs then have
 * what the module's own workers' jobs have: declared run fields rather than a property per job,
 * the wake after a move back to `prioritized`, the unstorable-result failure, the moved-name check.
 */
export function useTenantJobs(worker: Worker): void {
  Object.defineProperty(worker, 'Job', { configurable: true, get: tenantJobClass });
}

function tenantJobClass(): typeof Job {
  return TenantBullJob as typeof Job;
}

/** Why JSON cannot hold `value`, or undefined when it can. */
function unstorable(value: unknown): string | undefined {
  try {
    JSON.stringify(value);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** @internal The data to write for `payload` with the detached envelope and run options put back. */
export function withKept(payload: unknown, envelope: unknown, runOptions: unknown): unknown {
  const data: Record<string, unknown> = { ...(payload as object) };
  if (runOptions !== undefined) data[RUN_OPTIONS_KEY] = runOptions;
  if (envelope !== undefined) data[ENVELOPE_KEY] = envelope;
  return data;
}

/**
 * @internal Gives an opened job its envelope, run id and run options, and makes its `updateData`
 * keep the detached `_tenant` and `_run` values. A `TenantBullJob` takes them in its declared
 * fields; any other job (a test double, a worker the module did not create) gets them as
 * non-enumerable properties and a wrapped `updateData`.
 */
export function attachRun(
  job: Job,
  envelope: TenantEnvelope | undefined,
  runOptions: JobRunOptions,
  keptEnvelope: unknown,
  keptRunOptions: unknown,
): void {
  const runId = runOptions.runId ?? job.id;
  if (job instanceof TenantBullJob) {
    job.tenant = envelope;
    job.runId = runId;
    job.runOptions = runOptions;
    job.keptEnvelope = keptEnvelope;
    job.keptRunOptions = keptRunOptions;
    return;
  }
  if (envelope !== undefined) hide(job, 'tenant', envelope);
  hide(job, 'runId', runId);
  hide(job, RUN_OPTIONS_OF, runOptions);
  if (keptEnvelope === undefined && keptRunOptions === undefined) return;
  const updateData = job.updateData.bind(job);
  job.updateData = async (next: unknown) => {
    await updateData(withKept(next, keptEnvelope, keptRunOptions));
    job.data = next;
  };
}

function hide(job: Job, key: string | symbol, value: unknown): void {
  Object.defineProperty(job, key, { value, configurable: true, enumerable: false });
}
