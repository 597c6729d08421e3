import { ChildProcess, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import * as ts from 'typescript';
import { sharedBuild } from './shared-build';

const ROOT = join(__dirname, '..', '..');

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

const OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  useDefineForClassFields: false,
  resolveJsonModule: true,
};

/** A file's bytes (a Buffer, typed as the Uint8Array it is). */
function bytes(path: string): Uint8Array {
  const buffer = readFileSync(path);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** `lib/` and the given files or folders: each file's path from the root and its content. */
function sourcesOf(testFiles: string[]): [path: string, content: Uint8Array][] {
  const sources = [...files(join(ROOT, 'lib'))].filter((f) => !f.endsWith('.spec.ts'));
  const given = testFiles
    .map((f) => join(ROOT, f))
    .flatMap((path) => (statSync(path).isDirectory() ? [...files(path)] : [path]));
  return [...sources, ...given].map((source) => [relative(ROOT, source), bytes(source)]);
}

/** Writes the sources into `out`, `.ts` files transpiled to `.js`. */
function transpileInto(out: string, sources: [string, Uint8Array][]): void {
  for (const [path, content] of sources) {
    const target = join(out, path);
    mkdirSync(dirname(target), { recursive: true });
    if (path.endsWith('.ts')) {
      const { outputText } = ts.transpileModule(new TextDecoder().decode(content), {
        compilerOptions: OPTIONS,
        fileName: join(ROOT, path),
      });
      writeFileSync(target.replace(/\.ts$/, '.js'), outputText);
    } else writeFileSync(target, content);
  }
}

/**
 * Transpiles `lib/` and the given test files or folders (paths from the repository root) to JavaScript in
 * a temp folder, as ts-node's transpile-only mode would, once: a forked process then boots in
 * plain Node, ~6x less CPU than compiling the library again in every process (what a test that
 * starts a dozen processes on a loaded machine pays for). Returns the folder, which is the
 * caller's (to remove when done).
 */
export function compileFixtures(testFiles: string[]): string {
  const out = mkdtempSync(join(tmpdir(), 'tq-fixtures-'));
  transpileInto(out, sourcesOf(testFiles));
  return out;
}

/**
 * As `compileFixtures`, but the tree is shared by every test file and jest run (the three runs
 * `npm test` keeps going at once, the variants) that transpiles the same sources (`sharedBuild`):
 * its key is a hash of every source's path and content, this file, the compiler options and the
 * TypeScript version, so a change to any of them gives a new tree and a stale one is never used.
 * Transpiling lib/, the fixtures, the kit and the sample took 6-8 s of a loaded 2-core host per
 * test file. Never remove the folder returned: other runs may use it.
 */
export function sharedCompiledFixtures(testFiles: string[]): string {
  const sources = sourcesOf(testFiles);
  const hash = createHash('sha256');
  hash.update(`${ts.version}\0${JSON.stringify(OPTIONS)}\0`);
  hash.update(bytes(join(ROOT, 'test', 'support', 'compiled-fixtures.ts')));
  for (const [path, content] of sources) {
    hash.update(`${path}\0${content.length}\0`);
    hash.update(content);
  }
  return sharedBuild('tq-fixtures-shared', hash.digest('hex').slice(0, 32), (folder) =>
    transpileInto(folder, sources),
  );
}

/** The JavaScript file of a fixture compiled by `compileFixtures` (`fixture` from the root, `.ts`). */
export function compiledFile(out: string, fixture: string): string {
  return join(out, fixture.replace(/\.ts$/, '.js'));
}

/** What a compiled fixture's process needs in its environment: the repository's node_modules. */
export function compiledEnv(): Record<string, string> {
  return { NODE_PATH: join(ROOT, 'node_modules') };
}

/**
 * Forks a fixture compiled by `compileFixtures` (`fixture` relative to the repository root,
 * `.ts` as written) and resolves when it sends its first message ('ready').
 */
export function forkCompiled(
  out: string,
  fixture: string,
  env: Record<string, string>,
  into: ChildProcess[],
): Promise<ChildProcess> {
  const child = fork(compiledFile(out, fixture), [], {
    env: { ...process.env, ...compiledEnv(), ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  into.push(child);
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${fixture} exited early (${code})`)));
  });
}
