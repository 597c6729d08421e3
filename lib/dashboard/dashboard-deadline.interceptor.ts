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
import { isRedisConnectionError } from '../core/redis/connection-errors';
import { Messages } from '../tenant-queue.messages';
import { setRetryAfter } from '../tenant-queue-exception.filter';

/** Seconds the page is told to wait before it tries again (its own refresh retries anyway). */
const RETRY_AFTER_SECONDS = 5;

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
      setRetryAfter(context.switchToHttp().getResponse(), RETRY_AFTER_SECONDS);
      return new ServiceUnavailableException(Messages.dashboardRedisAway(why, ms));
    };
    return next.handle().pipe(
      timeout({
        first: ms,
        with: () => throwError(() => unavailable(`no answer within ${ms} ms`)),
      }),
      catchError((error: unknown) => {
        if (error instanceof HttpException) return throwError(() => error);
        const away = error instanceof EnqueueUnavailableError || isRedisConnectionError(error);
        return throwError(() => (away ? unavailable((error as Error).message) : error));
      }),
    );
  }
}
