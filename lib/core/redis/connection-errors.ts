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
 * An error of the connection to Redis, not of a command or a job: a socket error, or what
 * ioredis rejects a command with while the connection is not there (closed, not writeable, out
 * of retries). The one test the enqueue bound, the workers' outage log and the dashboard share.
 */
export function isRedisConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return (
    error.name === 'MaxRetriesPerRequestError' ||
    (code !== undefined && CONNECTION_CODES.has(code)) ||
    /Stream isn't writeable|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EPIPE/.test(
      error.message,
    )
  );
}
