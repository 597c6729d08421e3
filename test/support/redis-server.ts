import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface StartedRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A free loopback TCP port (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts a private `redis-server` on a free loopback port, keeping nothing on disk, and resolves
 * once it answers. `stop()` shuts it down and removes its folder.
 */
export async function startRedis(
  extraArgs: string[] = [],
  /** A port to reuse (a restart on the same address); a free one by default. */
  onPort?: number,
): Promise<StartedRedis> {
  const port = onPort ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'tq-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      ...extraArgs,
    ],
    { stdio: 'ignore' },
  );
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error)); // ENOENT: not installed
  try {
    await waitForPort(port, child, () => spawnError);
  } catch (error) {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(
  port: number,
  child: ChildProcess,
  spawnError: () => Error | undefined,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const error = spawnError();
    if (error) throw new Error(`redis-server could not be started: ${error.message}`);
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    try {
      execFileSync('redis-cli', ['-p', String(port), 'ping'], {
        stdio: 'pipe',
      });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`redis-server did not answer on port ${port} within 10 s`);
}
