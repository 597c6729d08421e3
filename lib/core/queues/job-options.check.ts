import { Job, PRIORITY_LIMIT } from 'bullmq';

/** What is wrong with a job's options: the option's name and why. */
export interface JobOptionsProblem {
  option: string;
  why: string;
}

type Opts = Record<string, unknown>;

/**
 * One rule. `bullmq: true` when plain BullMQ's `Queue.add` refuses the same input (in its own
 * checks or in its Lua scripts); `false` when BullMQ takes it and fails later (at admission
 * through the fair gate, at completion, at retry) or silently does something else.
 */
interface Rule {
  bullmq: boolean;
  check: (opts: Opts, json: string) => JobOptionsProblem | undefined;
}

const isInt = (v: unknown, min = 0) => typeof v === 'number' && Number.isInteger(v) && v >= min;
const isNum = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isObject = (v: unknown): v is Opts =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** BullMQ's own validator (`Job.validateOptions`), run on a stand-in job: it writes nothing. */
class BullCheck {
  opts: Opts = {};
  name = '';
  parentKey: string | undefined = undefined;
}
const bullCheck = new BullCheck();
// `protected` in BullMQ's types; a plain method of `Job.prototype` at run time.
const validateOptions = (Job.prototype as unknown as { validateOptions: unknown })
  .validateOptions as (this: BullCheck, jobData: { data: string }) => void;

/** Which option each of BullMQ's messages is about. */
const BULL_OPTION: [RegExp, string][] = [
  [/^Custom Id/, 'jobId'],
  [/^Priority/, 'priority'],
  [/^Deduplication and parent/, 'deduplication'],
  [/^Deduplication/, 'deduplication.id'],
  [/^Debounce/, 'debounce'],
  [/^Jitter/, 'backoff.jitter'],
  [/^The size of job/, 'sizeLimit'],
  [/cannot be used together/, 'parent options'],
];

function bullValidator(opts: Opts, json: string): JobOptionsProblem | undefined {
  bullCheck.opts = opts;
  bullCheck.parentKey = isObject(opts.parent)
    ? `${opts.parent.queue as string}:${opts.parent.id as string}`
    : undefined;
  try {
    validateOptions.call(bullCheck, { data: json });
    return undefined;
  } catch (error) {
    const why = (error as Error).message;
    const option = BULL_OPTION.find(([re]) => re.test(why))?.[1] ?? 'options';
    return { option, why: `is refused by BullMQ ("${why}")` };
  } finally {
    bullCheck.opts = {};
    bullCheck.parentKey = undefined;
  }
}

/** BullMQ's Lua (cjson) cannot store NaN or Infinity anywhere in the options. */
function nonFinite(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path;
  if (depth > 3 || typeof value !== 'object' || value === null) return undefined;
  for (const key of Object.keys(value)) {
    const found = nonFinite((value as Opts)[key], path ? `${path}.${key}` : key, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function keepJobsProblem(option: string, value: unknown): JobOptionsProblem | undefined {
  if (value === undefined || typeof value === 'boolean' || isInt(value)) return undefined;
  const why = 'must be a boolean, an integer >= 0 or { count?, age?, limit? } of numbers >= 0';
  if (!isObject(value)) return { option, why };
  const { count, age, limit, ...rest } = value;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return { option: `${option}.${extra}`, why: `is unknown (${why})` };
  if (count === undefined && age === undefined) return { option, why };
  if (count !== undefined && !isInt(count)) return { option: `${option}.count`, why };
  if (age !== undefined && !isNum(age)) return { option: `${option}.age`, why };
  if (limit !== undefined && !isInt(limit)) return { option: `${option}.limit`, why };
  return undefined;
}

const problem = (option: string, why: string): JobOptionsProblem => ({ option, why });

const RULES: Rule[] = [
  {
    bullmq: true,
    check: (o) =>
      o.jobId !== undefined && typeof o.jobId !== 'string'
        ? problem('jobId', 'must be a string')
        : undefined,
  },
  {
    bullmq: false,
    check: (o) =>
      o.jobId === ''
        ? problem('jobId', 'is empty (BullMQ would give the job another id)')
        : undefined,
  },
  {
    bullmq: true,
    check: (o) =>
      o.jobId === '0' || (o.jobId as string | undefined)?.startsWith('0:')
        ? problem('jobId', `must not be "0" or start with "0:"`)
        : undefined,
  },
  {
    bullmq: false,
    // BullMQ lets through ids of exactly three ":"-parts (its legacy repeat ids); they break keys.
    check: (o) =>
      typeof o.jobId === 'string' && o.jobId.includes(':')
        ? problem('jobId', 'must not contain ":"')
        : undefined,
  },
  { bullmq: true, check: bullValidator },
  {
    bullmq: true,
    check: (o) => {
      const path = nonFinite(o, '', 0);
      return path ? problem(path, 'is NaN or Infinity (Redis cannot store it)') : undefined;
    },
  },
  {
    bullmq: false,
    check: (o) =>
      o.priority !== undefined && !isInt(o.priority)
        ? problem('priority', `must be an integer from 0 to ${PRIORITY_LIMIT}`)
        : undefined,
  },
  {
    bullmq: false,
    check: (o) =>
      o.lifo && o.priority
        ? problem('lifo', 'cannot be used with priority (BullMQ ignores lifo for it)')
        : undefined,
  },
  {
    bullmq: false,
    check: (o) =>
      o.delay !== undefined && !isNum(o.delay)
        ? problem('delay', 'must be a number of ms >= 0')
        : undefined,
  },
  {
    bullmq: false,
    check: (o) =>
      o.attempts !== undefined && !isInt(o.attempts)
        ? problem('attempts', 'must be an integer >= 0')
        : undefined,
  },
  {
    bullmq: false,
    check: ({ backoff: b }) => {
      if (b === undefined || isNum(b)) return undefined;
      const why = 'must be a number of ms >= 0 or { type: string, delay?: ms >= 0, jitter?: 0-1 }';
      if (!isObject(b) || typeof b.type !== 'string' || b.type === '')
        return problem('backoff', why);
      return b.delay !== undefined && !isNum(b.delay) ? problem('backoff.delay', why) : undefined;
    },
  },
  { bullmq: false, check: (o) => keepJobsProblem('removeOnComplete', o.removeOnComplete) },
  { bullmq: false, check: (o) => keepJobsProblem('removeOnFail', o.removeOnFail) },
  {
    bullmq: false,
    check: (o) => {
      for (const option of ['keepLogs', 'stackTraceLimit', 'sizeLimit', 'timestamp']) {
        if (o[option] !== undefined && !isInt(o[option])) {
          return problem(option, 'must be an integer >= 0');
        }
      }
      return undefined;
    },
  },
  {
    bullmq: false,
    check: ({ deduplication: d }) =>
      d !== undefined && (!isObject(d) || typeof d.id !== 'string' || d.id === '')
        ? problem('deduplication.id', 'must be a non-empty string')
        : undefined,
  },
  {
    bullmq: false,
    check: ({ parent: p }) =>
      p !== undefined &&
      (!isObject(p) || typeof p.id !== 'string' || !p.id || typeof p.queue !== 'string' || !p.queue)
        ? problem('parent', 'must be { id: string, queue: string } (the parent queue key)')
        : undefined,
  },
  {
    bullmq: false,
    // `repeat` on add() is BullMQ's legacy repeat API: bullmq 5 makes a repeatable job outside
    // the tenant schedules (no tenant, no fair turn), bullmq 6 ignores it (the job runs once).
    check: (o) =>
      o.repeat !== undefined
        ? problem('repeat', 'is not supported on add(); use TenantScheduler or @TenantCron')
        : undefined,
  },
  {
    bullmq: false,
    // `debounce` is bullmq 5's old name for deduplication (bullmq 6 refuses it): its id would
    // reach BullMQ without the tenant's namespace, so one tenant's id could swallow another's job.
    check: (o) =>
      o.debounce !== undefined
        ? problem('debounce', 'is not supported; use deduplication: { id } (kept per tenant)')
        : undefined,
  },
];

const BULLMQ_RULES = RULES.filter((rule) => rule.bullmq);

/**
 * The first problem of a job's merged options, or undefined when BullMQ would take them and run
 * the job as asked. `json` is the payload as it will be stored (for `sizeLimit`). With
 * `onlyBullmq`, only the rules plain `Queue.add` enforces itself (the differential test's view).
 */
export function jobOptionsProblem(
  opts: object,
  json: string,
  onlyBullmq = false,
): JobOptionsProblem | undefined {
  for (const rule of onlyBullmq ? BULLMQ_RULES : RULES) {
    const found = rule.check(opts as Opts, json);
    if (found) return found;
  }
  return undefined;
}
