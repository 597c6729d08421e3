import { Logger } from '@nestjs/common';

/** `\uXXXX` for one character: how a log line writes what could end it or forge a field. */
export const escapeChar = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Characters a message body is escaped for: controls (tab aside) and line breaks. */
const BREAKING = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]/;
const EVERY_BREAKING = new RegExp(BREAKING.source, 'g');

/** A message as written: a string with a control character or line break has them as `\uXXXX`. */
function oneLine(message: unknown): unknown {
  if (typeof message !== 'string' || !BREAKING.test(message)) return message;
  return message.replace(EVERY_BREAKING, escapeChar);
}

/**
 * @internal The module's logger: Nest's `Logger`, with each message written on one line (its
 * control characters and line breaks escaped), so an id named in a message body (a custom
 * tenant id pattern may admit any character) cannot end the line or forge another. An error's
 * stack, the argument after the message, is written as it is.
 */
export class TenantQueueLogger extends Logger {
  override log(message: unknown, ...rest: unknown[]): void {
    super.log(oneLine(message), ...(rest as [string?]));
  }
  override warn(message: unknown, ...rest: unknown[]): void {
    super.warn(oneLine(message), ...(rest as [string?]));
  }
  override error(message: unknown, ...rest: unknown[]): void {
    super.error(oneLine(message), ...(rest as [string?]));
  }
  override debug(message: unknown, ...rest: unknown[]): void {
    super.debug(oneLine(message), ...(rest as [string?]));
  }
  override verbose(message: unknown, ...rest: unknown[]): void {
    super.verbose(oneLine(message), ...(rest as [string?]));
  }
  override fatal(message: unknown, ...rest: unknown[]): void {
    super.fatal(oneLine(message), ...(rest as [string?]));
  }
}
