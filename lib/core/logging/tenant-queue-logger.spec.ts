import { Logger, LoggerService } from '@nestjs/common';
import { TenantQueueLogger } from './tenant-queue-logger';

describe('TenantQueueLogger', () => {
  const written: unknown[][] = [];
  const capture: LoggerService = {
    log: (...args: unknown[]) => written.push(['log', ...args]),
    warn: (...args: unknown[]) => written.push(['warn', ...args]),
    error: (...args: unknown[]) => written.push(['error', ...args]),
    debug: (...args: unknown[]) => written.push(['debug', ...args]),
    verbose: (...args: unknown[]) => written.push(['verbose', ...args]),
    fatal: (...args: unknown[]) => written.push(['fatal', ...args]),
  };
  beforeEach(() => {
    written.length = 0;
    Logger.overrideLogger(capture);
  });
  afterAll(() => Logger.overrideLogger(['log', 'warn', 'error']));

  it('writes a message naming a hostile id on one line, its line breaks and controls escaped', () => {
    const logger = new TenantQueueLogger('TenantQueue');
    const id = 'evil\ntenant=other job=1\r\u2028\u0007\tend';
    logger.warn(`tenant "${id}" is suspended`);
    logger.error(`job ${id} failed`, 'Error: boom\n    at stack line');
    logger.log(`plain message`);
    expect(written).toEqual([
      [
        'warn',
        'tenant "evil\\u000atenant=other job=1\\u000d\\u2028\\u0007\tend" is suspended',
        'TenantQueue',
      ],
      // The stack after the message is written as it is.
      [
        'error',
        'job evil\\u000atenant=other job=1\\u000d\\u2028\\u0007\tend failed',
        'Error: boom\n    at stack line',
        'TenantQueue',
      ],
      ['log', 'plain message', 'TenantQueue'],
    ]);
  });

  it('passes what is not a string through untouched', () => {
    const logger = new TenantQueueLogger('TenantQueue');
    const object = { a: 'x\ny' };
    logger.debug(object);
    expect(written).toEqual([['debug', object, 'TenantQueue']]);
  });
});
