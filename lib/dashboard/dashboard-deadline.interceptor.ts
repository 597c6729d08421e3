import {
  CallHandler,
  ExecutionContext,
  HttpException,
  Inject,
  Injectable,
  NestInterceptor,
  ServiceUnavailableException,
} from '@nestjs/common';
import { Observable, catchError, throwError, timeout } from 'rxjs';
import { EnqueueUnavailableError } from '../core/errors';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core/options/core.options';
import { Messages } from '../tenant-queue.messages';

/** Errors of a Redis that is away (ioredis, BullMQ), by name or message. */
const REDIS_AWAY =
  /Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Stream isn't writeable|MaxRetriesPerRequest|Reached the max retries/;

/**
 * Bounds every dashboard route by `enqueueTimeoutMs`: while Redis is away its reads wait in the
 * client's offline queue until it is back, and the page hung with them. Past the bound, or on an
 * error of a Redis that is away, the route answers 503 with `Retry-After` and the page says so;
 * the read left waiting ends when Redis answers or the client gives up, as before.
 */
@Injectable()
export class DashboardDeadlineInterceptor implements NestInterceptor {
  constructor(@Inject(TENANT_QUEUE_OPTIONS) private readonly options: ResolvedTenantQueueOptions) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const ms = this.options.enqueueTimeoutMs;
    const unavailable = (why: string) => {
      const response = context.switchToHttp().getResponse<{
        setHeader?: (name: string, value: string) => unknown;
        header?: (name: string, value: string) => unknown;
      }>();
      if (typeof response?.setHeader === 'function') response.setHeader('Retry-After', '5');
      else if (typeof response?.header === 'function') response.header('Retry-After', '5');
      return new ServiceUnavailableException(Messages.dashboardRedisAway(why, ms));
    };
    return next.handle().pipe(
      timeout({
        first: ms,
        with: () => throwError(() => unavailable(`no answer within ${ms} ms`)),
      }),
      catchError((error: unknown) => {
        if (error instanceof HttpException) return throwError(() => error);
        const away =
          error instanceof EnqueueUnavailableError ||
          (error instanceof Error && REDIS_AWAY.test(`${error.name} ${error.message}`));
        return throwError(() => (away ? unavailable((error as Error).message) : error));
      }),
    );
  }
}
