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
