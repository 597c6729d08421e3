/**
 * Calls an application's listener with `event`. What it throws, or what an `async` listener's
 * promise rejects with, goes to `failed` (which logs it) and no further: a listener's error must
 * not keep the event from the next listener, fail the module's own work that emitted it, or,
 * as an unhandled rejection, end the process.
 */
export function callListener<T>(
  listener: (event: T) => unknown,
  event: T,
  failed: (error: unknown) => void,
): void {
  try {
    const result = listener(event);
    if (result instanceof Promise) result.catch(failed);
  } catch (error) {
    failed(error);
  }
}

/**
 * What a listener (or any application code) threw, for a log line: an Error's message, else the
 * value itself (a string, or an object as JSON), bounded to 200 characters; never throws.
 */
export function thrownText(thrown: unknown): string {
  try {
    if (thrown instanceof Error) return String(thrown.message).slice(0, 200);
    if (typeof thrown === 'string') return JSON.stringify(thrown.slice(0, 200));
    const json = typeof thrown === 'object' && thrown !== null ? JSON.stringify(thrown) : undefined;
    return (json ?? String(thrown)).slice(0, 200);
  } catch {
    return `a value of type ${typeof thrown} that cannot be shown`;
  }
}
