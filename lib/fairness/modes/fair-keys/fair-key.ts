import type { PreparedJob, TenantJobOptions } from '../../../core/queues/job-dispatcher.interface';
import type { TenantEnvelope } from '../../../core/types/tenant-envelope.interface';
import { ENVELOPE_KEY } from '../../../tenant-queue.constants';

/**
 * A job's fair key on a queue with `fairness.fairKey`: its envelope's `fairKey`, else (mode
 * `'actor'`) its envelope's actor id, else none. Read from the envelope, never from the options,
 * so the key is the one the signature covers.
 */
export function fairKeyOf(job: PreparedJob, actor: boolean): string | undefined {
  const envelope = job.data[ENVELOPE_KEY] as TenantEnvelope | undefined;
  if (envelope === undefined) return undefined;
  return envelope.fairKey ?? (actor ? envelope.actorId : undefined);
}

/**
 * `[lane, opts]` of a job (see `FairGate.laneOf`) as the enqueue script takes it on a queue with
 * fair keys: the lane argument `<lane>\n<key>` for a job with a key (neither contains a newline),
 * and the options for BullMQ without `fairKey`. Changes and returns `laneOf`'s fresh pair.
 */
export function withFairKey(
  pair: [string, object],
  job: PreparedJob,
  actor: boolean,
): [string, object] {
  const key = fairKeyOf(job, actor);
  if (key !== undefined) pair[0] = `${pair[0]}\n${key}`;
  if ((pair[1] as TenantJobOptions).fairKey !== undefined) {
    const { fairKey: _fairKey, ...opts } = pair[1] as TenantJobOptions;
    pair[1] = opts;
  }
  return pair;
}
