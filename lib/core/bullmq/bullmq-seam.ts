import { readFileSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import * as bullmq from 'bullmq';
import type { QueueBase } from 'bullmq';
import type { RedisClient } from '../redis/tenant-queue.redis';

/**
 * The one place that knows which BullMQ major is loaded (the peer range is `^5.80.4 || ^6.7.0`).
 * Everything else in the module uses the API both majors share; what differs is read here:
 * - the Redis client of a queue: `queue.client` (5), `queue.getBackend().client` (6, where
 *   `Queue#client` is gone);
 * - the backend: 6 lets an app replace Redis (`setDefaultBackendFactory`, a per-queue backend
 *   factory, `createPostgresBackend`); 5 is Redis only;
 * - a paused queue's waiting jobs: in `paused` (5) or `wait` (6) (`waitingCount`);
 * - which BullMQ copy is loaded, for the two-copies warning (`otherBullmqCopy`);
 * - how a worker is dropped past the shutdown bound (`dropWorker`).
 * What needs no code (same keys and job hash fields, BullMQ's own option check on each major,
 * `repeat` on add() refused on both) is listed in docs (Compatibility).
 */

/** What bullmq 6 exports beyond bullmq 5, as far as the module reads it. */
interface Bullmq6Exports {
  RedisQueueBackend: abstract new (...args: never[]) => object;
  getDefaultBackendFactory: () => unknown;
  createRedisBackend: unknown;
}

/** bullmq 6's exports, where this process loaded bullmq 6 (undefined on 5). */
const six: Bullmq6Exports | undefined =
  typeof (bullmq as unknown as Partial<Bullmq6Exports>).getDefaultBackendFactory === 'function'
    ? (bullmq as unknown as Bullmq6Exports)
    : undefined;

/** Where the loaded BullMQ is installed (its package.json), to tell two copies apart. */
export const BULLMQ_PACKAGE_JSON: string = require.resolve('bullmq/package.json');

/** The version of the BullMQ the module loaded (e.g. `6.7.6`). */
export const BULLMQ_VERSION: string = versionAt(BULLMQ_PACKAGE_JSON);

/** Its major: 5 or 6. */
export const BULLMQ_MAJOR = Number(BULLMQ_VERSION.split('.')[0]);

function versionAt(packageJson: string): string {
  return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
}

interface Client5 {
  client: Promise<RedisClient>;
}
interface Client6 {
  getBackend(): { client?: Promise<RedisClient> };
}

/** The Redis client a BullMQ queue or worker writes with (on 6, only when its backend is Redis). */
export function bullClient(queue: QueueBase): Promise<RedisClient> {
  if (six) {
    const client = (queue as unknown as Client6).getBackend().client;
    if (client) return client;
    return Promise.reject(new Error(`BullMQ queue "${queue.name}" has no Redis backend`));
  }
  return (queue as unknown as Client5).client;
}

/**
 * Wakes the workers of a queue blocked waiting for a job, as BullMQ does when it puts a job in
 * `wait`: its marker (`ZADD <marker> 0 "0"`, `addBaseMarkerIfNeeded`, both majors). BullMQ's
 * `moveJobFromActiveToWait` (`job.moveToWait`, and the worker's own move after a handler's
 * `RateLimitError`) puts a job with a priority back into `prioritized` without it (bullmq 5.81
 * and 6.7): a worker blocked on the marker then takes it only when its block times out, after
 * its `drainDelay` (5 s) or 10 s while a delayed job waits. Every job of a fair queue by turn has
 * a priority. Only a queue whose backend is Redis has the marker; a marker while the queue is
 * paused or at its global concurrency wakes a worker that finds nothing, as BullMQ's own does.
 */
export async function wakeWorkers(queue: QueueBase): Promise<void> {
  if (nonRedisBackendOf(queue)) return;
  const client = await bullClient(queue);
  await client.zadd(queue.keys.marker, 0, '0');
}

interface Connection5 {
  connection?: { close?(force: boolean): Promise<void> };
}

/**
 * Drops a worker's connections at once (a shutdown past its bound). On bullmq 5 its connection
 * is first closed by force (marked closing), else a job that ends after the drop is retried at
 * once and forever ('Connection is closed.' and the worker closing skip the retry delay): the
 * process spun a core and never ended. bullmq 6 stops retrying once the worker is closing.
 */
export async function dropWorker(worker: { disconnect(): Promise<void> }): Promise<void> {
  // close(true) marks the connection closing before its first await.
  const closed = six ? undefined : (worker as Connection5).connection?.close?.(true);
  await Promise.all([closed, worker.disconnect()]);
}

/** The name of the non-Redis backend BullMQ gives new queues and workers; undefined: Redis. */
export function defaultNonRedisBackend(): string | undefined {
  if (!six) return undefined;
  const factory = six.getDefaultBackendFactory();
  if (factory === six.createRedisBackend) return undefined;
  return (factory as { name?: string }).name || 'a custom backend factory';
}

/** The name of a queue's or worker's backend when it is not Redis; undefined: Redis. */
export function nonRedisBackendOf(queue: QueueBase): string | undefined {
  if (!six) return undefined;
  const backend = (queue as unknown as Client6).getBackend() as object;
  if (backend instanceof six.RedisQueueBackend) return undefined;
  return backend.constructor?.name || 'a custom backend';
}

/** A copy of BullMQ: its version and where its package.json is. */
export interface BullmqCopy {
  version: string;
  packageJson: string;
}

/**
 * The BullMQ that `pkg` (a package installed beside the module, e.g. bullmq-otel) resolves, when
 * it is another copy than the module's own; undefined when it is the same copy, or when `pkg` or
 * its BullMQ is not installed.
 */
export function otherBullmqCopy(pkg: string): BullmqCopy | undefined {
  try {
    const from = dirname(require.resolve(`${pkg}/package.json`));
    const packageJson = require.resolve('bullmq/package.json', { paths: [from] });
    if (realpathSync(packageJson) === realpathSync(BULLMQ_PACKAGE_JSON)) return undefined;
    return { version: versionAt(packageJson), packageJson };
  } catch {
    return undefined;
  }
}

/**
 * The jobs waiting to start in `getJobCounts('waiting', ...)`: bullmq 5 moves a paused queue's
 * waiting jobs into its `paused` list and reports them under `paused`; bullmq 6 keeps them in
 * `wait` (its `paused` list is only drained, on resume, of jobs an older BullMQ left there).
 */
export function waitingCount(counts: Record<string, number>): number {
  return (counts.waiting ?? 0) + (counts.paused ?? 0);
}

/** BullMQ's short names of some job options in a stored job (`optsEncodeMap`, both majors). */
const OPTION_CODES: Readonly<Record<string, string>> = (
  bullmq as unknown as { optsEncodeMap: Record<string, string> }
).optsEncodeMap;
const CODED_OPTIONS = Object.keys(OPTION_CODES);

/** The job options BullMQ's add does more with than store them (or that a plain add refuses). */
const NOT_STORE_ONLY = [
  'parent',
  'repeat',
  'telemetry',
  'prevMillis',
  'debounce',
  'priority',
  'lifo',
];

/**
 * A new job's options as BullMQ's own add stores them in its hash (bullmq 5 and 6: short names
 * from `optsEncodeMap`, undefined options left out), for a script that writes the job as that add
 * would; undefined where the add does more than store the job (a parent, deduplication, a
 * repeat, telemetry, a priority, lifo, a delay), so the caller leaves it to BullMQ.
 * `job` is BullMQ's own `Job` of the add (its options normalized, checked by `validateOptions`).
 */
export function storedJobOptions(job: bullmq.Job): string | undefined {
  const opts = job.opts as Record<string, unknown>;
  if (job.parentKey !== undefined || job.deduplicationId !== undefined) return undefined;
  if (job.repeatJobKey !== undefined || ((opts.delay as number) ?? 0) > 0) return undefined;
  for (const name of NOT_STORE_ONLY) if (opts[name] !== undefined) return undefined;
  let coded = false;
  for (const name of CODED_OPTIONS) {
    if (opts[name] !== undefined) {
      coded = true;
      break;
    }
  }
  if (!coded) return JSON.stringify(opts);
  const stored: Record<string, unknown> = Object.create(null);
  for (const [name, value] of Object.entries(opts))
    stored[Object.hasOwn(OPTION_CODES, name) ? OPTION_CODES[name] : name] = value;
  return JSON.stringify(stored);
}
