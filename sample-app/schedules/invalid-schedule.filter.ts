import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import { InvalidScheduleError } from '../../lib';

/** Answers 400 with the scheduler's own message when a tenant sends a bad cron or zone. */
@Catch(InvalidScheduleError)
export class InvalidScheduleFilter implements ExceptionFilter {
  catch(error: InvalidScheduleError, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse();
    response.status(400).json({ statusCode: 400, error: 'Bad Request', message: error.message });
  }
}
