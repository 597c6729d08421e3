import type { ResolvedResolutionOptions as ResolvedResolution } from '../types/core-options.interface';

/**
 * One way to find the tenant of an HTTP request. Each lives in its own file in this folder and
 * is listed once in `strategies.ts`; its name joins `TenantResolverName` by declaration merging.
 */
export interface TenantResolutionStrategy {
  /** Its input exists only after routing or authentication: read on first use, not at once. */
  readonly late: boolean;
  /**
   * The client writes it itself (a header, the host name, the path): refused when it names
   * another tenant than an authenticated claim.
   */
  readonly clientWritten: boolean;
  /** The tenant id the request carries this way, if any (unvalidated). */
  read(req: any, options: ResolvedResolution): string | undefined;
  /** The source as a refusal names it (`header "x-tenant-id"`). */
  describe(options: ResolvedResolution): string;
}

/** A string of a request field: the first of an array, a number as text, never an empty one. */
export function asString(value: unknown): string | undefined {
  if (Array.isArray(value)) value = value[0];
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
