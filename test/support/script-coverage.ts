import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '@jest/types';

const TRACE_ENV = 'TQ_SCRIPT_TRACE';
const LIB = join(__dirname, '..', '..', 'lib');

/**
 * Starts the Cluster run's record of the module's Lua commands sent (`script-trace.js` appends
 * to it from every test file): a fresh file, named in the environment the jest workers inherit.
 */
export function startScriptTrace(): void {
  const dir = mkdtempSync(join(tmpdir(), 'tq-script-trace-'));
  globalThis.__TQ_SCRIPT_TRACE_DIR__ = dir;
  const file = join(dir, 'sent.txt');
  writeFileSync(file, '');
  process.env[TRACE_ENV] = file;
}

declare global {
  /** The folder `startScriptTrace` made in this process: the only one `checkScriptTrace` removes. */
  var __TQ_SCRIPT_TRACE_DIR__: string | undefined;
}

/**
 * Every Lua command lib/ defines: the `tq...` names of the specs given to `LuaScripts` (a name,
 * then its `{ file: ... }` spec or its `.lua` file).
 */
export function definedCommands(dir = LIB): string[] {
  const names = new Set<string>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) definedCommands(path).forEach((name) => names.add(name));
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.spec.ts')) continue;
    const source = readFileSync(path, 'utf8');
    for (const [, name] of source.matchAll(
      /\b(tq[A-Z]\w*)\s*:\s*(?:\{\s*(?:numberOfKeys:[^,]+,\s*)?file:|'[\w-]+\.lua')/g,
    )) {
      names.add(name);
    }
  }
  return [...names].sort();
}

/**
 * At the end of a whole Cluster run (no path or name filter): fails naming each Lua command of
 * lib/ that no suite of the run sent, since the run covers a selection of the suites and each
 * script must run on the cluster (its keys in one slot). Removes the record either way.
 */
export function checkScriptTrace(globalConfig: Config.GlobalConfig): void {
  const file = process.env[TRACE_ENV];
  if (!file) return;
  const sent = new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean));
  // To see what a selection sends: TQ_SCRIPT_TRACE_OUT=<file> npx jest -c test/cluster/... <specs>
  if (process.env.TQ_SCRIPT_TRACE_OUT) {
    writeFileSync(process.env.TQ_SCRIPT_TRACE_OUT, [...sent].sort().join('\n') + '\n');
  }
  const dir = globalThis.__TQ_SCRIPT_TRACE_DIR__;
  if (dir) rmSync(dir, { recursive: true, force: true });
  globalThis.__TQ_SCRIPT_TRACE_DIR__ = undefined;
  const filtered =
    globalConfig.testPathPatterns.isSet() ||
    !!globalConfig.testNamePattern ||
    globalConfig.onlyChanged ||
    globalConfig.findRelatedTests;
  if (filtered) return;
  const missing = definedCommands().filter((name) => !sent.has(name));
  if (missing.length > 0) {
    throw new Error(
      `The Redis Cluster run sent no ${missing.join(', ')}: add a suite that runs ` +
        `${missing.length === 1 ? 'it' : 'them'} to testMatch in test/cluster/jest.config.js ` +
        '(each Lua command of lib/ must run on the cluster at least once).',
    );
  }
}
