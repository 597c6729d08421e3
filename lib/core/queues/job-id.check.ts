import { QueueKeys } from 'bullmq';
import { tenantKeyPart } from '../context/tenant-key';
import { InvalidJobIdError } from '../errors';
import { Messages } from '../../tenant-queue.messages';

/**
 * Job ids BullMQ would misread: a job's hash is `<prefix>:<queue>:<id>`, the queue's own keys are
 * `<prefix>:<queue>:<suffix>`, so an id equal to a suffix writes the job over that key (WRONGTYPE
 * on every later add, or a queue that stops serving). The suffixes of the installed BullMQ's
 * `QueueKeys`, plus the keys its scripts build by hand: `priority` (read by its migrations since
 * 5.x) and `metrics` (the head of its metrics keys).
 */
export const BULLMQ_KEY_SUFFIXES: ReadonlySet<string> = new Set([
  ...Object.keys(new QueueKeys().getKeys('q')).filter((suffix) => suffix !== ''),
  'priority',
  'metrics',
]);

/**
 * The module's own job ids: schedules, crons, fan-outs and chunks contain `~`; replays end in
 * `.r<n>`. A caller's id may be neither, so no caller can claim an id the module will need.
 */
export const MODULE_ID_MARK = '~';
const REPLAY_SUFFIX = /\.r\d+$/;

/** Whether `id` lies in the module's namespace. */
export function isModuleJobId(id: string): boolean {
  return id.includes(MODULE_ID_MARK) || REPLAY_SUFFIX.test(id);
}

/** The longest job id a caller may choose (`add`'s `jobId`). */
export const MAX_JOB_ID_LENGTH = 1000;

/**
 * The longest id a lookup (`DeadLetters`, `TenantQueueInspector.explain`) takes: a caller's id
 * plus the room the module's replay suffix (`.r<n>`) adds to it.
 */
const MAX_LOOKUP_ID_LENGTH = MAX_JOB_ID_LENGTH + 24;

/** Whether `id` can name a job: a non-empty string no longer than any id the module admits. */
export function isJobIdLookup(id: unknown): id is string {
  return typeof id === 'string' && id !== '' && id.length <= MAX_LOOKUP_ID_LENGTH;
}

/** Options objects whose `jobId` the module built (see `moduleJobOptions`). */
const moduleMade = new WeakSet<object>();

/**
 * @internal Marks `opts` as carrying a job id the module made (in its `~` namespace); returns it.
 */
export function moduleJobOptions<T extends object>(opts: T): T {
  moduleMade.add(opts);
  return opts;
}

/**
 * Refuses, with `InvalidJobIdError`, a caller-chosen id BullMQ would misread or that lies in the
 * module's namespace. Other faults of the id (not a string, `:`, integer-like) are the options
 * check's (`InvalidJobOptionsError`).
 */
export function assertCallerJobId(queue: string, name: string, opts: object, id: unknown): void {
  if (typeof id !== 'string') return;
  if (BULLMQ_KEY_SUFFIXES.has(id)) {
    throw new InvalidJobIdError(Messages.jobIdIsBullKey(queue, name, id));
  }
  if (moduleMade.has(opts)) return;
  if (isModuleJobId(id)) {
    throw new InvalidJobIdError(Messages.jobIdInModuleNamespace(queue, name, id));
  }
  if (id.length > MAX_JOB_ID_LENGTH) {
    throw new InvalidJobIdError(Messages.jobIdTooLong(queue, name, id, MAX_JOB_ID_LENGTH));
  }
}

/**
 * The deduplication id BullMQ gets for a tenant's id: `t<tenant key part>:<id>` (`s:<id>` for a
 * job without a tenant). The key part has no `:`, so two tenants' ids never meet.
 */
export function tenantDeduplicationId(tenantId: string | undefined, id: string): string {
  return tenantId === undefined ? `s:${id}` : `t${tenantKeyPart(tenantId)}:${id}`;
}
