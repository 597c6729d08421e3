import { TenantRateLimit } from '../../../core/types/tenant-tier-options.interface';

/** GCRA parameters of a rate limit: emission interval T = per / max, tolerance (burst - 1) * T. */
export function gcraOf(limit: TenantRateLimit): [number, number] {
  const interval = limit.per / limit.max;
  return [interval, ((limit.burst ?? 1) - 1) * interval];
}

/** A rate limit as the gate stores it: "T:tol:max:per:burst", or "none" for an explicit no-limit. */
export function encodeRate(limit: TenantRateLimit | false): string {
  if (limit === false) return 'none';
  const [interval, tolerance] = gcraOf(limit);
  return `${interval}:${tolerance}:${limit.max}:${limit.per}:${limit.burst ?? 1}`;
}

/** The stored form back to the limit (`false` = explicitly none, `null` = nothing stored). */
export function decodeRate(value: unknown): TenantRateLimit | false | null {
  if (typeof value !== 'string' || value === '') return null;
  if (value === 'none') return false;
  const [, , max, per, burst] = value.split(':').map(Number);
  return max > 0 && per > 0 ? { max, per, burst } : null;
}
