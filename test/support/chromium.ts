import { existsSync } from 'node:fs';

/** Debian's Chromium (or `CHROMIUM_PATH`), driven by playwright-core in the browser e2e tests. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Launch flags for headless Chromium in a container without a GPU, sandbox or network. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `describe`, or `describe.skip` with a hint when Chromium is missing (never skipped in CI). */
export function describeWithChromium(what: string): jest.Describe {
  if (existsSync(CHROMIUM) || process.env.CI) return describe;
  console.warn(
    `${what}: no Chromium at ${CHROMIUM}; ` +
      `install Debian's "chromium" package (or set CHROMIUM_PATH) to run it.`,
  );
  return describe.skip;
}
