import { ConsoleLogger, Logger } from '@nestjs/common';

/** A Nest logger that keeps every warning and error it prints, for tests that assert on them. */
export class CollectingLogger extends ConsoleLogger {
  readonly lines: string[] = [];

  override warn(message: unknown, ...rest: unknown[]) {
    this.lines.push(String(message));
    super.warn(message, ...rest);
  }

  override error(message: unknown, ...rest: unknown[]) {
    this.lines.push(String(message));
    super.error(message, ...rest);
  }

  /** The lines logged since `from` that say a fair-gate call failed (how FairGate logs it). */
  gateErrors(from = 0): string[] {
    return this.lines
      .slice(from)
      .filter((line) => /^fair (tick|release|send|refuse) [^:]+: |user_script/.test(line));
  }
}

/**
 * Every warning a Nest `Logger` prints from now on, kept in `lines` instead of printed (the
 * module's loggers are Nest's); `restore()` puts the logger back.
 */
export function captureWarnings(): { lines: string[]; restore(): void } {
  const lines: string[] = [];
  const spy = jest
    .spyOn(Logger.prototype, 'warn')
    .mockImplementation((message: unknown) => void lines.push(String(message)));
  return { lines, restore: () => spy.mockRestore() };
}

/**
 * Every warning and error a Nest `Logger` prints from now on, kept in `lines` as
 * `<level> <message>` instead of printed; `jest.restoreAllMocks()` puts the logger back.
 */
export function captureWarningsAndErrors(): string[] {
  const lines: string[] = [];
  for (const level of ['warn', 'error'] as const) {
    jest
      .spyOn(Logger.prototype, level)
      .mockImplementation((...args: unknown[]) => void lines.push(`${level} ${String(args[0])}`));
  }
  return lines;
}
