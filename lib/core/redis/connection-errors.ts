import { TenantQueueError } from '../errors/tenant-queue.error';

/** Socket error codes of a Redis that is away (down, unreachable, the connection cut). */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
]);

/**
 * What an ioredis `Cluster` rejects a command with when no node would run it: a slot whose master
 * is down or not yet known again (`MOVED` to it, `CLUSTERDOWN`, `TRYAGAIN` of a slot being
 * migrated, each retried until `maxRedirections`), or no node answering the slots refresh.
 */
const CLUSTER_UNAVAILABLE =
  /^(Too many Cluster redirections|CLUSTERDOWN|Failed to refresh slots cache|None of startup nodes is available)/;

/**
 * An error of the connection to Redis, not of a command or a job: a socket error, or what
 * ioredis rejects a command with while the connection is not there (closed, not writeable, out
 * of retries, a Cluster slot no node serves). The one test the enqueue bound, the workers'
 * outage log and the dashboard share.
 */
export function isRedisConnectionError(error: unknown): boolean {
  // The module's own errors may quote a cause of another service (a directory's "connect
  // ECONNREFUSED 127.0.0.1:5432"): they say what they are.
  if (!(error instanceof Error) || error instanceof TenantQueueError) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return (
    error.name === 'MaxRetriesPerRequestError' ||
    error.name === 'ClusterAllFailedError' ||
    CLUSTER_UNAVAILABLE.test(error.message) ||
    (code !== undefined && CONNECTION_CODES.has(code)) ||
    /Stream isn't writeable|Cluster isn't ready|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EPIPE/.test(
      error.message,
    )
  );
}

/**
 * Redis's refusal of a write while it is at `maxmemory` under a policy that evicts nothing
 * (`noeviction`, or no key it may evict): it runs no part of the refused command, and a script
 * is refused at its first write.
 */
export function isOutOfMemoryReply(error: unknown): boolean {
  return error instanceof Error && /^OOM /.test(error.message);
}

/**
 * Redis's refusal of a command (or a key, or a channel) the connection's ACL user may not use
 * (`NOPERM`): a setting of the server, the same on every retry.
 */
export function isPermissionReply(error: unknown): boolean {
  return error instanceof Error && /^NOPERM /.test(error.message);
}
