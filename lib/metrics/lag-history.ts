import type { RedisClient } from '../core/redis/tenant-queue.redis';
import { quantileOf } from './lag-buckets';
import { LAG_FIELDS, RESULT_FIELDS } from './tenant-record';
import { VisibilityKeys } from './visibility-keys';

/**
 * Minutes of history kept per tenant and queue: the tenant-minute hashes the recorder's flush
 * writes anyway (no extra write) live this long, whatever the inspector's window.
 */
export const HISTORY_MINUTES = 60;

/**
 * One minute of one tenant on one queue (all processes together).
 * @publicApi
 */
export interface TenantLagPoint {
  /** Start of the minute (ms since epoch). */
  at: number;
  /** Lag percentiles (ms) of the jobs first started in this minute; null when none started. */
  p50: number | null;
  p95: number | null;
  p99: number | null;
  /** First starts in the minute. */
  started: number;
  /** Attempts that ended in the minute, by result (see `TenantResultCounts`). */
  completed: number;
  failed: number;
  timedOut: number;
  cancelled: number;
  deadLettered: number;
}

/**
 * The last hour of one tenant on one queue, minute by minute, oldest first (60 points).
 * @publicApi
 */
export interface TenantLagHistory {
  queue: string;
  tenantId: string;
  minutes: number;
  points: TenantLagPoint[];
}

const FIELDS = [...LAG_FIELDS, ...RESULT_FIELDS];

/** Reads the last `HISTORY_MINUTES` minute hashes (only their bucket and result fields). */
export async function readLagHistory(
  client: RedisClient,
  keys: VisibilityKeys,
  tenantId: string,
  now: number,
): Promise<TenantLagHistory> {
  const current = Math.floor(now / 60_000);
  const minutes = Array.from(
    { length: HISTORY_MINUTES },
    (_, i) => current - HISTORY_MINUTES + 1 + i,
  );
  const pipe = client.pipeline();
  for (const minute of minutes) pipe.hmget(keys.minute(tenantId, minute), ...FIELDS);
  const replies = (await pipe.exec()) ?? [];
  const points = minutes.map((minute, i) => {
    const [error, values] = replies[i] ?? [null, []];
    if (error) throw error;
    const counts = (values as (string | null)[]).map((v) => Number(v ?? 0));
    const buckets = counts.slice(0, LAG_FIELDS.length);
    const results = counts.slice(LAG_FIELDS.length);
    return {
      at: minute * 60_000,
      p50: quantileOf(buckets, 0.5),
      p95: quantileOf(buckets, 0.95),
      p99: quantileOf(buckets, 0.99),
      started: buckets.reduce((sum, n) => sum + n, 0),
      completed: results[0],
      failed: results[1],
      timedOut: results[2],
      cancelled: results[3],
      deadLettered: results[4],
    };
  });
  return { queue: keys.definition.name, tenantId, minutes: HISTORY_MINUTES, points };
}
