export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `predicate` until it is true, or fails with `what` after `timeoutMs`. */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await sleep(20);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/**
 * Waits until `count()` reaches `target`, failing only when it stops moving for `stallMs`: for
 * volume tests whose speed depends on the machine, where a stall (not slowness) is the bug.
 */
export async function waitForProgress(
  count: () => number,
  target: number,
  what: string,
  stallMs = 30_000,
): Promise<void> {
  let last = count();
  let movedAt = Date.now();
  while (last < target) {
    await sleep(50);
    const now = count();
    if (now !== last) {
      last = now;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > stallMs) {
      throw new Error(`${what}: stuck at ${now} of ${target} for ${stallMs} ms`);
    }
  }
}
