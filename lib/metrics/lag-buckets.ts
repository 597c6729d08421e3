/**
 * Upper bounds (ms) of the lag and run-time histogram buckets; one more bucket holds the rest.
 * @publicApi
 */
export const LAG_BUCKETS_MS: readonly number[] = [
  5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000,
];

/** Index of the bucket `ms` falls in (`LAG_BUCKETS_MS.length` for the overflow bucket). */
export function bucketOf(ms: number): number {
  for (let i = 0; i < LAG_BUCKETS_MS.length; i++) if (ms <= LAG_BUCKETS_MS[i]) return i;
  return LAG_BUCKETS_MS.length;
}

/**
 * The `q` quantile (0..1) of a bucketed histogram, interpolated linearly inside its bucket as
 * Prometheus' `histogram_quantile` does; the overflow bucket reports its lower bound.
 */
export function quantileOf(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i] === 0) continue;
    if (seen + counts[i] >= rank) {
      const lower = i === 0 ? 0 : LAG_BUCKETS_MS[i - 1];
      if (i >= LAG_BUCKETS_MS.length) return lower;
      const upper = LAG_BUCKETS_MS[i];
      return Math.round(lower + ((upper - lower) * (rank - seen)) / counts[i]);
    }
    seen += counts[i];
  }
  return LAG_BUCKETS_MS[LAG_BUCKETS_MS.length - 1];
}
