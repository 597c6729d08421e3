import { InvalidPayloadError } from '../errors';
import { Messages } from '../../tenant-queue.messages';

/**
 * Reserved key of `job.data` that carries per-job run options. The runner strips it.
 * @publicApi
 */
export const RUN_OPTIONS_KEY = '_run';

/**
 * Per-job options of one run, stored under `_run` in the job data.
 * @publicApi
 */
export interface JobRunOptions {
  /** Deadline of each attempt, in ms; overrides the processor's `timeoutMs`. */
  timeoutMs?: number;
  /** Run id of this job (default: the job id). Replays keep the run id of the job they replay. */
  runId?: string;
  /** @internal How many times this run has been replayed from the dead letters. */
  replay?: number;
}

const RUN_ID = /^[^:]{1,200}$/;
/** The longest deadline Node's timers keep (2^31 - 1 ms, about 24.8 days); longer fires at once. */
export const MAX_TIMEOUT = 2_147_483_647;

/** Returns why `options` are invalid, or undefined when they are fine. */
export function runOptionsProblem(options: unknown): string | undefined {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    return 'it is not an object';
  }
  const { timeoutMs, runId, replay, ...rest } = options as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return `unknown field "${extra}"`;
  if (timeoutMs !== undefined) {
    if (!Number.isInteger(timeoutMs) || (timeoutMs as number) <= 0) {
      return 'timeoutMs is not a positive integer';
    }
    if ((timeoutMs as number) > MAX_TIMEOUT) return `timeoutMs is above ${MAX_TIMEOUT}`;
  }
  if (runId !== undefined && (typeof runId !== 'string' || !RUN_ID.test(runId))) {
    return 'runId is not 1-200 characters without ":"';
  }
  if (replay !== undefined && (!Number.isInteger(replay) || (replay as number) < 0)) {
    return 'replay is not a non-negative integer';
  }
  return undefined;
}

/**
 * Returns a copy of `data` carrying per-job run options, for `TenantQueue.add(name, data)`:
 * `queue.add('export', withRunOptions({ reportId }, { timeoutMs: 5_000 }))`.
 * @publicApi
 */
export function withRunOptions<T extends object>(data: T, options: JobRunOptions): T {
  const problem = runOptionsProblem(options);
  if (problem) throw new InvalidPayloadError(Messages.invalidRunOptions(problem));
  return { ...data, [RUN_OPTIONS_KEY]: { ...options } };
}

/** @internal Where a job the module's workers did not build keeps its run options. */
export const RUN_OPTIONS_OF = Symbol('tenant-queue:run-options');

const NONE: JobRunOptions = Object.freeze({});

/** @internal The run options the runner took from a job's `_run`, if any. */
export function runOptionsOf(job: object): JobRunOptions {
  const held = job as { runOptions?: JobRunOptions; [RUN_OPTIONS_OF]?: JobRunOptions };
  return held.runOptions ?? held[RUN_OPTIONS_OF] ?? NONE;
}
