import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './redis-server';

export interface StartedPostgres {
  /** A database this helper created and nothing else uses. */
  url: string;
  stop(): Promise<void>;
}

/** Debian's `postgresql` package puts each major version's binaries here. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/**
 * A private Postgres for one test file. With `DATABASE_URL` set: a fresh database created on
 * that server (dropped by `stop()`). Otherwise `initdb` + `postgres` in a temp folder, on a free
 * loopback port with its unix socket in that folder; as root it runs as the `postgres` OS user
 * through `setpriv` (postgres refuses root). `stop()` shuts it down and removes the folder.
 */
export async function startPostgres(): Promise<StartedPostgres> {
  const external = process.env.DATABASE_URL;
  return external ? createScratchDatabase(external) : startPrivateServer();
}

async function createScratchDatabase(serverUrl: string): Promise<StartedPostgres> {
  const name = `tq_test_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    stop: async () => {
      const client = new Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

async function startPrivateServer(): Promise<StartedPostgres> {
  const bin = postgresBinDir();
  if (!bin) {
    throw new Error(
      "No initdb under /usr/lib/postgresql/*/bin: install Debian's postgresql package " +
        '(`apt-get install postgresql`, as .ci/run does) or set DATABASE_URL.',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'tq-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  // setpriv execs the command itself (no process in between), so signals reach postgres.
  const run = (command: string, args: string[]): [string, string[]] =>
    asRoot
      ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', command, ...args]]
      : [command, args];
  mkdirSync(data, { mode: 0o700 });
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    for (const path of [dir, data]) chownSync(path, uid, gid);
  }
  const [initdb, initArgs] = run(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  execFileSync(initdb, initArgs, { stdio: 'pipe' });
  const port = await freePort();
  const [postgres, args] = run(join(bin, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=50',
  ]);
  const child: ChildProcess = spawn(postgres, args, { stdio: 'ignore' });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  try {
    await waitUntilReady(url, child);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        // "Smart" shutdown first (waits for sessions to close, so a client that is ending gets no
        // FATAL), then "fast" (ends the sessions a test left open).
        child.kill('SIGTERM');
        const fast = setTimeout(() => child.kill('SIGINT'), 5_000);
        await exited;
        clearTimeout(fast);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`postgres exited with code ${child.exitCode}`);
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch (error) {
      last = error;
      await client.end().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`postgres did not answer within 20 s: ${(last as Error)?.message}`);
}
