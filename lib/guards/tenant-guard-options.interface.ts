/**
 * How the module's job guards and `TenantRequiredGuard` ask the application ports.
 * @publicApi
 */
export interface TenantGuardOptions {
  /**
   * Keep a directory answer for this many milliseconds, per process, to spare the directory on
   * bursts. A suspension then takes up to this long to be seen, and so does a reactivation (the
   * tenant's jobs run meanwhile are still cancelled, for good). At most 30000.
   * @default 0 (off: every job asks the directory)
   */
  tenantCacheTtlMs?: number;
  /**
   * A directory or checker call slower than this counts as an outage: the attempt fails and the
   * job is retried per its `attempts`/`backoff`; it is never cancelled for it.
   * @default 5000
   */
  portTimeoutMs?: number;
}
