import { Job, type Queue } from 'bullmq';
import type { RedisClient } from '../core/redis/tenant-queue.redis';
import { Messages } from '../tenant-queue.messages';

/** The hold score's floor (fair-bull.lua: `HOLD_UNTIL_MS * 0x1000`). */
const HOLD_MIN = 9007199254736896;
/** Held ids read per round. */
const PAGE = 500;

/** What `releaseHeld` did: its warning (kind: which one), and when to look again. */
export interface HeldRelease {
  kind: 'released' | 'waiting';
  warning: string;
  /** A worker process with fairness is alive: look again in this many ms. */
  retryMs?: number;
}

/** Longest wait before looking again while a worker process with fairness is alive. */
const RETRY_MAX_MS = 30_000;

/**
 * A queue this process runs without fairness whose BullMQ delayed set still holds jobs a fair
 * gate held (a process with `fairness` added them; the hold lasts until 2039): unless a worker
 * process with fairness is alive to admit them (its heartbeat in the gate; looked at again once
 * it ends), promotes them into BullMQ's wait list, so they run now, outside any turn. Off the
 * job path: at start, and again only while such jobs wait for a live worker with fairness.
 * Returns undefined when there was nothing to do.
 */
export async function releaseHeld(
  client: RedisClient,
  queue: Queue,
  bullPrefix: string,
): Promise<HeldRelease | undefined> {
  const delayed = `${bullPrefix}:${queue.name}:delayed`;
  const held = await client.zcount(delayed, HOLD_MIN, '+inf');
  if (held === 0) return undefined;
  const [seconds, micros] = await client.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const last = await client.zrange(`${bullPrefix}:~fair:consumers`, '-1', '-1', 'WITHSCORES');
  if (last.length > 0 && Number(last[1]) > now) {
    return {
      kind: 'waiting',
      warning: Messages.heldWithoutFairness(queue.name, held, 0),
      retryMs: Math.min(RETRY_MAX_MS, Number(last[1]) - now + 100),
    };
  }
  let released = 0;
  for (;;) {
    const ids = await client.zrangebyscore(delayed, HOLD_MIN, '+inf', 'LIMIT', 0, PAGE);
    let moved = 0;
    for (const id of ids) {
      const job = await Job.fromId(queue, id);
      // Admitted or removed meanwhile: nothing to do.
      if (
        !job ||
        !(await job.promote().then(
          () => true,
          () => false,
        ))
      )
        continue;
      moved++;
    }
    released += moved;
    if (ids.length < PAGE || moved === 0) break;
  }
  return { kind: 'released', warning: Messages.heldWithoutFairness(queue.name, 0, released) };
}
