import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { INestApplicationContext, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

/**
 * Forks `test/fixtures/<fixture>` under ts-node with `env` added to this process's environment,
 * and resolves once it sends 'ready' (see `serveUntilSigterm`). The child joins `into`, so a test
 * can kill what it started with `killAll`.
 */
export function forkFixture(
  fixture: string,
  env: Record<string, string>,
  into: ChildProcess[],
): Promise<ChildProcess> {
  const child = fork(join(__dirname, '..', 'fixtures', fixture), [], {
    execArgv: ['-r', 'ts-node/register/transpile-only'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  into.push(child);
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${fixture} exited early (${code})`)));
  });
}

/** Sends a message and resolves with the child's next reply. */
export function ask<T = unknown>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (reply) => resolve(reply as T));
    child.send(message as object);
  });
}

/** SIGKILLs every child still alive and resolves once each has exited. */
export async function killAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      return exited;
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
