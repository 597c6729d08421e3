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
