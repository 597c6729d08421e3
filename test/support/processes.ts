import { ChildProcess } from 'node:child_process';
import type { INestApplicationContext, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

/**
 * Every file a fixture may load, transpiled once for every test file and jest run that has the
 * same sources (see `sharedCompiledFixtures`).
 */
let compiled: string | undefined;

/** The folder of the fixtures compiled with the library (shared: never remove it). */
export async function compiledTree(): Promise<string> {
  // Loaded here, not at the top: fixture processes import this file too, and need no compiler.
  const { sharedCompiledFixtures } = await import('./compiled-fixtures');
  compiled ??= sharedCompiledFixtures(['test/fixtures', 'test/support', 'sample-app']);
  return compiled;
}

/**
 * Forks `test/fixtures/<fixture>` with `env` added to this process's environment, and resolves
 * once it sends its first message ('ready', see `serveUntilSigterm`). The fixture runs as plain
 * JavaScript, compiled with the library once per test file: a fork then boots without compiling
 * the library again. The child joins `into`, so a test can kill what it started with `killAll`.
 */
export async function forkFixture(
  fixture: string,
  env: Record<string, string>,
  into: ChildProcess[],
): Promise<ChildProcess> {
  const { forkCompiled } = await import('./compiled-fixtures');
  return forkCompiled(await compiledTree(), `test/fixtures/${fixture}`, env, into);
}

/**
 * For a test that spawns `test/fixtures/<fixture>` itself (to read its output): the command line
 * that runs it as plain JavaScript (compiled as for `forkFixture`), and the environment it needs
 * on top of this process's.
 */
export async function compiledFixture(
  fixture: string,
): Promise<{ args: string[]; env: Record<string, string> }> {
  const { compiledFile, compiledEnv } = await import('./compiled-fixtures');
  return {
    args: [compiledFile(await compiledTree(), `test/fixtures/${fixture}`)],
    env: compiledEnv(),
  };
}

/** Sends a message and resolves with the child's next reply. */
export function ask<T = unknown>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (reply) => resolve(reply as T));
    child.send(message as object);
  });
}

/** Resolves once `child` has exited (at once if it has), with its signal, else its exit code. */
export function exited(child: ChildProcess): Promise<NodeJS.Signals | number | null> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.signalCode ?? child.exitCode);
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
}

/** SIGKILLs every child still alive and resolves once each has exited. */
export async function killAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const done = exited(child);
      child.kill('SIGKILL');
      return done;
    }),
  );
}

/**
 * For a fixture process: tells the parent it is ready, and on SIGTERM closes the app, then
 * `cleanup`, then exits.
 */
export function serveUntilSigterm(
  app: INestApplicationContext,
  cleanup: () => Promise<unknown> = async () => undefined,
): void {
  process.once('SIGTERM', () => {
    void app
      .close()
      .then(cleanup)
      .then(() => process.exit(0));
  });
  process.send?.('ready');
}

/** For a worker fixture: boots `module` (logging errors only) and serves it until SIGTERM. */
export async function serveWorkerModule(
  module: Type,
  cleanup?: () => Promise<unknown>,
): Promise<void> {
  const app = await NestFactory.createApplicationContext(module, { logger: ['error'] });
  serveUntilSigterm(app, cleanup);
}
