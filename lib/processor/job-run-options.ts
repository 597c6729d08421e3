import { InvalidPayloadError } from '../errors';
import { Messages } from '../tenant-queue.messages';

/** Reserved key of `job.data` that carries per-job run options. The runner strips it. */
export const RUN_OPTIONS_KEY = '_run';

/** Per-job options of one run, stored under `_run` in the job data. */
export interface JobRunOptions {
  /** Deadline of each attempt, in ms; overrides the processor's `timeoutMs`. */
  timeoutMs?: number;
  /** Run id of this job (default: the job id). Replays keep the run id of the job they replay. */
  runId?: string;
  /** @internal How many times this run has been replayed from the dead letters. */
  replay?: number;
}

const RUN_ID = /^[^:]{1,200}$/;
const MAX_TIMEOUT = 2_147_483_647;
const PARSED = Symbol('tenant-queue:run-options');

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
 */
export function withRunOptions<T extends object>(data: T, options: JobRunOptions): T {
  const problem = runOptionsProblem(options);
  if (problem) throw new InvalidPayloadError(Messages.invalidRunOptions(problem));
  return { ...data, [RUN_OPTIONS_KEY]: { ...options } };
}

/**
 * @internal Reads (once) and detaches the run options of a job: `job.data` loses its `_run` key.
 * Returns undefined + a problem when the key holds something invalid.
 */
export function takeRunOptions(job: { data: unknown }): {
  options: JobRunOptions;
  problem?: string;
} {
  const holder = job as { [PARSED]?: { options: JobRunOptions; problem?: string } };
  if (holder[PARSED]) return holder[PARSED];
  const data = job.data as Record<string, unknown> | undefined;
  let parsed: { options: JobRunOptions; problem?: string } = { options: {} };
  if (data && typeof data === 'object' && Object.hasOwn(data, RUN_OPTIONS_KEY)) {
    const { [RUN_OPTIONS_KEY]: raw, ...payload } = data;
    const problem = runOptionsProblem(raw);
    parsed = problem ? { options: {}, problem } : { options: raw as JobRunOptions };
    job.data = payload;
  }
  Object.defineProperty(job, PARSED, { value: parsed, configurable: true, enumerable: false });
  return parsed;
}

/** @internal The run options already taken from a job, if any. */
export function runOptionsOf(job: object): JobRunOptions {
  return (job as { [PARSED]?: { options: JobRunOptions } })[PARSED]?.options ?? {};
}
