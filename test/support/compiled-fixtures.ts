import { ChildProcess, fork } from 'node:child_process';
import {
  copyFileSync,
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

const ROOT = join(__dirname, '..', '..');

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

/**
 * Transpiles `lib/` and the given test files or folders (paths from the repository root) to JavaScript in
 * a temp folder, as ts-node's transpile-only mode would, once: a forked process then boots in
 * plain Node, ~6x less CPU than compiling the library again in every process (what a test that
 * starts a dozen processes on a loaded machine pays for). Returns the folder.
 */
export function compileFixtures(testFiles: string[]): string {
  const out = mkdtempSync(join(tmpdir(), 'tq-fixtures-'));
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    useDefineForClassFields: false,
    resolveJsonModule: true,
  };
  const sources = [...files(join(ROOT, 'lib'))].filter((f) => !f.endsWith('.spec.ts'));
  const given = testFiles
    .map((f) => join(ROOT, f))
    .flatMap((path) => (statSync(path).isDirectory() ? [...files(path)] : [path]));
  for (const source of [...sources, ...given]) {
    const target = join(out, relative(ROOT, source));
    mkdirSync(dirname(target), { recursive: true });
    if (source.endsWith('.ts')) {
      const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
        compilerOptions: options,
        fileName: source,
      });
      writeFileSync(target.replace(/\.ts$/, '.js'), outputText);
    } else copyFileSync(source, target);
  }
  return out;
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
