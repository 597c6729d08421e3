import { suggestOption } from '../options/option-names';
import { TenantProcessorOptions } from './tenant-processor.decorator';

/** A worker option BullMQ refuses, and what it must be. */
export interface WorkerOptionProblem {
  option: string;
  value: unknown;
  must: string;
}

const positiveInteger = (v: unknown) => Number.isInteger(v) && (v as number) >= 1;
const count = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;
const positive = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v > 0;

/**
 * What BullMQ's `Worker` constructor throws a plain `Error` for, or takes without sense (a
 * concurrency of 2.5), checked at boot for every consumer, the testing module's included.
 */
const RULES: [option: string, ok: (value: unknown) => boolean, must: string][] = [
  ['concurrency', positiveInteger, 'an integer >= 1'],
  ['stalledInterval', positive, 'a number of ms > 0'],
  ['drainDelay', positive, 'a number of seconds > 0'],
  ['maxStalledCount', count, 'an integer >= 0'],
  ['maxStartedAttempts', count, 'an integer >= 0'],
];

/** The first worker option of a `@TenantProcessor` BullMQ would refuse, if any. */
export function workerOptionsProblem(
  options: TenantProcessorOptions,
): WorkerOptionProblem | undefined {
  for (const [option, ok, must] of RULES) {
    const value = (options as Record<string, unknown>)[option];
    if (value !== undefined && !ok(value)) return { option, value, must };
  }
  return undefined;
}

/** Every `@TenantProcessor` option name: BullMQ's worker options and the module's (compiler-checked). */
export const WORKER_OPTION_NAMES = Object.keys({
  name: true,
  autorun: true,
  concurrency: true,
  limiter: true,
  metrics: true,
  maximumRateLimitDelay: true,
  maxStartedAttempts: true,
  maxStalledCount: true,
  stalledInterval: true,
  removeOnComplete: true,
  removeOnFail: true,
  skipStalledCheck: true,
  skipLockRenewal: true,
  drainDelay: true,
  lockDuration: true,
  lockRenewTime: true,
  runRetryDelay: true,
  settings: true,
  useWorkerThreads: true,
  workerForkOptions: true,
  workerThreadsOptions: true,
  telemetry: true,
  blockingConnection: true,
  skipVersionCheck: true,
  skipWaitingForReady: true,
  timeoutMs: true,
  pools: true,
} satisfies Record<keyof TenantProcessorOptions, true>);

/**
 * The first option name of a `@TenantProcessor` that misspells a known one (`concurency`,
 * `maxConcurrency`). Other unknown names pass on to BullMQ as before: a later BullMQ may know them.
 */
export function misspeltWorkerOption(options: TenantProcessorOptions): string | undefined {
  return Object.keys(options).find(
    (key) =>
      !WORKER_OPTION_NAMES.includes(key) && suggestOption(key, WORKER_OPTION_NAMES) !== undefined,
  );
}
