import { ArgumentsHost, Catch, ExceptionFilter, HttpStatus } from '@nestjs/common';
import {
  EnqueueUnavailableError,
  InvalidTenantIdError,
  JobIdTakenError,
  MissingTenantError,
  TenantNotActiveError,
  TenantSourceConflictError,
} from './core/errors';
import { TenantPortUnavailableError } from './guards';
import { TenantBacklogFullError } from './fairness';
import { DeadLetterNotFoundError, DeadLetterResolvedError } from './dead-letters';
import { InvalidScheduleError } from './scheduler';
import { PoolRoutingUnavailableError } from './pools';

type Mapped = abstract new (...args: never[]) => Error;

/** Each error the filter answers, its HTTP status, and whether the client may retry later. */
const STATUSES: [error: Mapped, status: HttpStatus, retryLater: boolean][] = [
  [EnqueueUnavailableError, HttpStatus.SERVICE_UNAVAILABLE, true],
  [TenantPortUnavailableError, HttpStatus.SERVICE_UNAVAILABLE, true],
  [PoolRoutingUnavailableError, HttpStatus.SERVICE_UNAVAILABLE, true],
  [TenantBacklogFullError, HttpStatus.TOO_MANY_REQUESTS, true],
  [MissingTenantError, HttpStatus.BAD_REQUEST, false],
  [InvalidTenantIdError, HttpStatus.BAD_REQUEST, false],
  [InvalidScheduleError, HttpStatus.BAD_REQUEST, false],
  [TenantSourceConflictError, HttpStatus.FORBIDDEN, false],
  [TenantNotActiveError, HttpStatus.FORBIDDEN, false],
  [JobIdTakenError, HttpStatus.CONFLICT, false],
  [DeadLetterNotFoundError, HttpStatus.NOT_FOUND, false],
  [DeadLetterResolvedError, HttpStatus.CONFLICT, false],
];

/**
 * Answers the module's errors that reach an HTTP route with a status that says what the client
 * can do: 503 with `Retry-After` when Redis (or a tenant port, or the directory a pool route
 * needs) is away, 429 with `Retry-After`
 * for a full tenant backlog, 400 for a missing or invalid tenant or a schedule a tenant sent
 * that cannot run (`InvalidScheduleError`: a bad cron or zone), 403 for a tenant that is not
 * active or a conflicting tenant source, 409 for a job id taken or a dead letter already run again
 * outside `replay`, 404 for a dead letter the tenant does not have (another tenant's job id reads
 * the same as none). Every other error goes on to
 * Nest's own handling (a 500 for an unexpected one), and so does every error outside HTTP (a
 * GraphQL resolver, an RPC handler). Apply it with
 * `app.useGlobalFilters(new TenantQueueExceptionFilter())`, `@UseFilters(...)`, or the
 * `APP_FILTER` provider. The body is Nest's shape: `{ statusCode, error, message }`.
 * @publicApi
 */
@Catch(...STATUSES.map(([error]) => error))
export class TenantQueueExceptionFilter implements ExceptionFilter {
  /** Seconds a client is told to wait (`Retry-After`) before it tries again. */
  protected readonly retryAfterSeconds: number = 5;

  catch(error: Error, host: ArgumentsHost): void {
    // Outside HTTP (a GraphQL resolver, an RPC handler) there is no response to write: returning
    // nothing hands the error to that transport's own handling.
    if (host.getType() !== 'http') return;
    const [, status, retryLater] = STATUSES.find(([type]) => error instanceof type)!;
    // Express (`setHeader`, `status().json()`) or Fastify (`header`, `code().send()`).
    const response = host.switchToHttp().getResponse<Record<string, (...args: any[]) => any>>();
    const body = { statusCode: status, error: error.name, message: error.message };
    if (retryLater) setRetryAfter(response, this.retryAfterSeconds);
    if (typeof response.setHeader === 'function') response.status(status).json(body);
    else response.code(status).send(body);
  }
}

/**
 * @internal Sets `Retry-After` on an Express (`setHeader`) or Fastify (`header`) response: the
 * filter's and the dashboard's 503s.
 */
export function setRetryAfter(response: unknown, seconds: number): void {
  const reply = response as {
    setHeader?: (name: string, value: string) => unknown;
    header?: (name: string, value: string) => unknown;
  };
  if (typeof reply?.setHeader === 'function') reply.setHeader('Retry-After', String(seconds));
  else if (typeof reply?.header === 'function') reply.header('Retry-After', String(seconds));
}
