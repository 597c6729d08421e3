import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { sharedBuild } from './shared-build';

const ROOT = resolve(__dirname, '../..');

/** What `npm pack` made: the tarball's folder and name, and the files it holds. */
export interface PackedPackage {
  dir: string;
  filename: string;
  files: string[];
}

/** A command `run` killed at its `timeoutMs`. */
export class CommandTimedOut extends Error {}

/**
 * Runs a command to its end and returns its output; a failure throws with both its streams. With
 * `timeoutMs`, a command still running then is killed (SIGKILL: a stalled npm ignored SIGTERM)
 * and `CommandTimedOut` thrown. Its stdin is closed: a command that asks fails, it never waits.
 */
export function run(
  command: string,
  args: string[],
  cwd: string,
  env = process.env,
  timeoutMs?: number,
): string {
  try {
    return execFileSync(command, args, {
      cwd,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(timeoutMs ? { timeout: timeoutMs, killSignal: 'SIGKILL' as const } : {}),
    });
  } catch (error) {
    const { stdout, stderr, code } = error as { stdout?: string; stderr?: string; code?: string };
    const what = `${command} ${args.join(' ')}`;
    if (code === 'ETIMEDOUT') {
      throw new CommandTimedOut(`${what} was still running after ${timeoutMs} ms: killed`);
    }
    throw new Error(`${what} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** The repository's files (tracked and new, not ignored): what a clone holds. */
function sources(): string[] {
  return run('git', ['ls-files', '-co', '--exclude-standard', '-z'], ROOT)
    .split('\0')
    .filter((path) => path && existsSync(join(ROOT, path)));
}

/**
 * The tarball `npm pack` makes in a clone of the repository: its files without dist/ (never
 * built), its install linked in, and only node, npm and a shell on the PATH, as on Windows
 * (cmd.exe has no rm, cp, mkdir -p...), so the build that prepack runs must do with Node alone.
 *
 * Made once for every jest run (the full run's and the Nest 12 run's packaging suites, the Nest 12
 * packed app) with the same inputs: it sits in a folder named after a hash of every file of the
 * clone, the Node and npm versions and the linked TypeScript's, so a change to any of them packs
 * anew and a stale tarball is never used (each pack built the library with tsc, 10-13 s of a
 * loaded 2-core host), kept by `sharedBuild`. Never remove or change what it returns.
 */
export function packedPackage(): PackedPackage {
  const paths = sources();
  const hash = createHash('sha256');
  const npmVersion = run('npm', ['--version'], ROOT).trim();
  const typescript = readFileSync(join(ROOT, 'node_modules', 'typescript', 'package.json'));
  hash.update(`${process.version}\0${npmVersion}\0`);
  hash.update(new Uint8Array(typescript.buffer, typescript.byteOffset, typescript.byteLength));
  for (const path of paths) {
    const content = readFileSync(join(ROOT, path));
    hash.update(`\0${path}\0${content.length}\0`);
    hash.update(new Uint8Array(content.buffer, content.byteOffset, content.byteLength));
  }
  const dir = sharedBuild('tq-packed', hash.digest('hex').slice(0, 32), (folder) =>
    pack(paths, folder),
  );
  const manifest = join(dir, 'packed.json');
  return { dir, ...(JSON.parse(readFileSync(manifest, 'utf8')) as Omit<PackedPackage, 'dir'>) };
}

/** Packs a clone of `paths` into `fresh` (see `packedPackage`). */
function pack(paths: string[], fresh: string): void {
  const clone = mkdtempSync(join(tmpdir(), 'tq-clone-'));
  const bin = mkdtempSync(join(tmpdir(), 'tq-bin-'));
  try {
    for (const path of paths) {
      mkdirSync(dirname(join(clone, path)), { recursive: true });
      copyFileSync(join(ROOT, path), join(clone, path));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    if (existsSync(join(clone, 'dist'))) throw new Error('the clone has a dist/ before its pack');
    const npm = realpathSync(run('sh', ['-c', 'command -v npm'], ROOT).trim());
    symlinkSync(npm, join(bin, 'npm'));
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync(realpathSync(run('sh', ['-c', 'command -v sh'], ROOT).trim()), join(bin, 'sh'));
    const output = run('npm', ['pack', '--json', '--pack-destination', fresh], clone, {
      ...process.env,
      // The pack runs as in a user's shell: without a variant run's resolve hook.
      NODE_OPTIONS: undefined,
      PATH: bin,
    });
    const [packed] = JSON.parse(output.slice(output.indexOf('[\n'))) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed.files.map((file) => file.path);
    writeFileSync(join(fresh, 'packed.json'), JSON.stringify({ filename: packed.filename, files }));
  } finally {
    rmSync(clone, { recursive: true, force: true });
    rmSync(bin, { recursive: true, force: true });
  }
}
