import type { Queue } from 'bullmq';
import { TenantEnvelopeCodec } from '../core/envelope/tenant-envelope.codec';
import { workersOn } from '../core/processor/queue-consumer.check';
import type { RedisClient } from '../core/redis/tenant-queue.redis';
import type { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { ExplainedJobState, JobExplanation, JobHold } from './job-explanation.interface';
import { GateJobAnswer, TenantQueueStateSource } from './tenant-queue-state-source.interface';

/**
 * `TenantQueueInspector.explain`: asks the gate of each pool of the queue (shared pool last),
 * then BullMQ. A job the gate handed over is answered from BullMQ's state.
 */
export async function explainJob(
  client: RedisClient,
  codec: TenantEnvelopeCodec,
  registry: TenantQueueRegistry,
  stateSource: TenantQueueStateSource | undefined,
  queue: string,
  jobId: string,
): Promise<JobExplanation> {
  const pools = registry.poolsToConsume(queue);
  let handed: { pool: string; tenantId: string } | undefined;
  const askGates = async (): Promise<JobExplanation | undefined> => {
    for (const pool of pools) {
      const answer = stateSource?.handles(pool)
        ? await stateSource.explainJob?.(pool, jobId)
        : undefined;
      if (answer?.state === 'gate') return fromGate(pool, jobId, answer);
      if (answer) handed ??= { pool, tenantId: answer.tenantId };
    }
    return undefined;
  };
  const gated = await askGates();
  if (gated) return gated;
  for (const pool of pools) {
    const bull = registry.getQueue(pool).bullQueue;
    const state = await bull.getJobState(jobId);
    // A gate holds its jobs in BullMQ's delayed set: one it took back between the two reads (a
    // pause, a cap, the slow lane recalling a tenant's turns) is the gate's to explain.
    if (state === 'delayed' && stateSource?.handles(pool)) {
      const again = await askGates();
      if (again) return again;
    }
    if (state !== 'unknown') return fromBull(client, codec, pool, bull, jobId, state);
  }
  const workers = handed ? await workersOn(registry.getQueue(handed.pool).bullQueue) : null;
  const state: ExplainedJobState = handed ? 'admitted' : 'unknown';
  return {
    queue: handed?.pool ?? queue,
    jobId,
    state,
    tenantId: handed?.tenantId ?? null,
    holds: [],
    summary: handed
      ? `Admitted by the fair gate of "${handed.pool}" and on its way into BullMQ.`
      : `Neither the fair gate nor BullMQ of "${queue}" holds job "${jobId}": it was never ` +
        `enqueued there, or it ended and was removed (removeOnComplete/removeOnFail).`,
    gate: null,
    delayedUntil: null,
    workers,
  };
}

function fromGate(
  pool: string,
  jobId: string,
  answer: Extract<GateJobAnswer, { state: 'gate' }>,
): JobExplanation {
  return {
    queue: pool,
    jobId,
    state: 'gate',
    tenantId: answer.tenantId,
    holds: answer.holds,
    summary: gateSummary(answer),
    gate: answer.place,
    delayedUntil: null,
    workers: null,
  };
}

async function fromBull(
  client: RedisClient,
  codec: TenantEnvelopeCodec,
  pool: string,
  bull: Queue,
  jobId: string,
  state: Exclude<ExplainedJobState, 'gate' | 'admitted' | 'unknown'>,
): Promise<JobExplanation> {
  const [job, workers] = await Promise.all([bull.getJob(jobId), workersOn(bull)]);
  const holds: JobHold[] = [];
  let delayedUntil: number | null = null;
  // A prioritized job (a fair queue's turns at add among them) has BullMQ's wait list and the
  // lower scores of its prioritized set ahead of it.
  let ahead: number | null = null;
  if (state === 'waiting' || state === 'prioritized') {
    holds.push(workers === 0 ? 'no-consumer' : 'workers-busy');
    if (state === 'prioritized') {
      const [rank, wait] = await Promise.all([
        client.zrank(bull.keys.prioritized, jobId),
        client.llen(bull.keys.wait),
      ]);
      if (rank !== null) ahead = rank + wait;
    }
  } else if (state === 'delayed') {
    // BullMQ scores a delayed job by its due time * 0x1000 (plus a tie-breaking counter).
    const score = await client.zscore(bull.keys.delayed, jobId);
    if (score !== null) delayedUntil = Math.floor(Number(score) / 0x1000);
    holds.push('delay');
  }
  const summaries: Record<typeof state, string> = {
    waiting: `In BullMQ's wait list of "${pool}", ${workers === 0 ? 'but no worker consumes this queue in any process: start one' : 'waiting for a free worker slot'}.`,
    prioritized: `In BullMQ's wait list of "${pool}" (by priority${ahead !== null ? `, ${ahead} job(s) ahead of it` : ''}), ${workers === 0 ? 'but no worker consumes this queue in any process: start one' : 'waiting for a free worker slot'}.`,
    'waiting-children': `Waiting for its child jobs to finish.`,
    active: `Running now (attempt ${(job?.attemptsMade ?? 0) + 1}).`,
    delayed: `Delayed${delayedUntil !== null ? ` until ${new Date(delayedUntil).toISOString()}` : ''}${job?.attemptsMade ? ` (a retry after attempt ${job.attemptsMade} failed)` : ''}.`,
    completed: `Completed${job?.finishedOn ? ` at ${new Date(job.finishedOn).toISOString()}` : ''}.`,
    failed: `Failed for good${job?.failedReason ? `: ${job.failedReason}` : ''}.`,
  };
  return {
    queue: pool,
    jobId,
    state,
    // The tenant a worker would run it as: none for an envelope it would refuse (forged).
    tenantId: (job && codec.envelopeOf(job)?.tenantId) ?? null,
    holds,
    summary: summaries[state],
    gate: null,
    delayedUntil,
    workers,
  };
}

function gateSummary(answer: Extract<GateJobAnswer, { state: 'gate' }>): string {
  const { place, tenantId } = answer;
  const ahead =
    place.backlogPosition === 0
      ? `next in ${tenantId}'s backlog of ${place.backlogLength}`
      : `${place.backlogPosition} of ${tenantId}'s jobs ahead of it (backlog ${place.backlogLength})`;
  const first = answer.holds[0];
  const why: Record<JobHold, string> = {
    paused: `${tenantId} is paused on this queue: resume it to admit its jobs`,
    'concurrency-cap': `${tenantId} has ${place.inFlight} jobs in flight, its concurrency cap of ${place.concurrency}`,
    'rate-limit': `${tenantId}'s rate limit lets its next job start at ${new Date(place.rateLimitedUntil ?? 0).toISOString()}`,
    'lane-share': `lane "${place.lane}" waits for its share of the worker slots (an earlier lane is served first)`,
    'window-full': `the gate has ${place.admitted} jobs admitted, its window of ${place.window}; it admits more as they finish`,
    'slow-lane': `${tenantId} is in the slow lane (served at a share of its weight after repeated failures)`,
    turn: `${place.turnPosition} tenants come before ${tenantId} in the turn order`,
    backlog: `${tenantId}'s earlier jobs go first`,
    'no-consumer': '',
    'workers-busy': '',
    delay: '',
  };
  const turn =
    place.turnPosition === null
      ? `${tenantId} is out of turn`
      : `${tenantId} is ${ordinal(place.turnPosition + 1)} of ${place.tenantsInTurn} in the turn order`;
  const held = first ? `; held by: ${why[first]}` : '; it is admitted with the next dispatch';
  return `Waiting in the fair gate, ${ahead}; ${turn}${held}.`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
