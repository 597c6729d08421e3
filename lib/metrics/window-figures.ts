import { LAG_BUCKETS_MS, quantileOf } from './lag-buckets';
import { TenantLagStats, TenantResultCounts } from './tenant-queue-stats.interface';
import { RESULT_FIELDS } from './tenant-record';

/**
 * @internal One tenant's lag percentiles and attempt results over the inspector's window, from
 * its tenant-minute hashes as the recorder's flush writes them (`b<i>` lag buckets, one field
 * per result).
 */
export function windowFigures(
  minutes: Record<string, string>[],
  windowMinutes: number,
): { lag: TenantLagStats; results: TenantResultCounts } {
  const buckets = new Array<number>(LAG_BUCKETS_MS.length + 1).fill(0);
  const results = new Map<string, number>(RESULT_FIELDS.map((f) => [f, 0]));
  for (const minute of minutes) {
    for (const [field, value] of Object.entries(minute)) {
      if (field[0] === 'b') buckets[Number(field.slice(1))] += Number(value);
      else if (results.has(field)) results.set(field, results.get(field)! + Number(value));
    }
  }
  return {
    lag: {
      p50: quantileOf(buckets, 0.5),
      p95: quantileOf(buckets, 0.95),
      p99: quantileOf(buckets, 0.99),
      samples: buckets.reduce((sum, n) => sum + n, 0),
      windowMinutes,
    },
    results: {
      completed: results.get('completed')!,
      failed: results.get('failed')!,
      timedOut: results.get('timed_out')!,
      cancelled: results.get('cancelled')!,
      deadLettered: results.get('dead_lettered')!,
    },
  };
}

/**
 * @internal Age of the `n`-th latest job enqueued without a delay, from the per-second enqueue
 * counts of the window's minutes (latest first); the window's start when fewer were enqueued in
 * it.
 */
export function nthLatestAge(
  minutes: Record<string, string>[],
  current: number,
  n: number,
  now: number,
): number {
  let seen = 0;
  for (let i = 0; i < minutes.length; i++) {
    for (let second = 59; second >= 0; second--) {
      const count = Number(minutes[i][`e${second}`] ?? 0);
      if (count === 0) continue;
      seen += count;
      if (seen >= n) return Math.max(0, now - ((current - i) * 60_000 + second * 1000));
    }
  }
  return Math.max(0, now - (current - minutes.length + 1) * 60_000);
}
