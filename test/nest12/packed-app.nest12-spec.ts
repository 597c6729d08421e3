import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CommandTimedOut, packedPackage, run as runCommand } from '../support/packed-package';
import { uniquePrefix } from '../support/redis-url';
import { waitFor } from '../support/wait';

const root = resolve(__dirname, '../..');
/** The user's app and tools run as in their project: without the run's NODE_OPTIONS hook. */
const userEnv = { ...process.env, NODE_OPTIONS: undefined };
const versionOf = (dir: string, name: string): string =>
  (
    JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

/**
 * What a NestJS 12 user does: install the packed library next to Nest 12 (no peer overrides, so
 * the peer ranges must admit Nest 12), compile their app with tsc against both packages' types,
 * and run it with Node, which loads ES-module Nest through require(esm).
 */
describe('the packed library in a NestJS 12 app (npm install, tsc, node)', () => {
  let dir: string;
  let app: ChildProcess | undefined;
  let base = '';
  let banner = '';
  const logs: string[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tq-nest12-app-'));
    const run = (command: string, args: string[], cwd: string) =>
      runCommand(command, args, cwd, userEnv);
    // The tarball `npm pack` makes (built by prepack in a clean clone), shared with the packaging
    // suites of the jest runs that have the same sources (see packedPackage).
    const packed = packedPackage();
    copyFileSync(join(packed.dir, packed.filename), join(dir, packed.filename));
    const nest12 = __dirname;
    const dependencies = {
      'nestjs-tenant-queue': `file:./${packed.filename}`,
      '@nestjs/common': versionOf(nest12, '@nestjs/common'),
      '@nestjs/core': versionOf(nest12, '@nestjs/core'),
      '@nestjs/platform-express': versionOf(nest12, '@nestjs/platform-express'),
      // The bridge's optional peer, at its Nest 12 major: the peer range must admit it too.
      '@nestjs/bullmq': versionOf(nest12, '@nestjs/bullmq'),
      // The rest at the versions this repository tests with.
      ...Object.fromEntries(
        [
          'bullmq',
          'ioredis',
          'nestjs-cls',
          'reflect-metadata',
          'rxjs',
          'typescript',
          '@types/node',
        ].map((name) => [name, versionOf(root, name)]),
      ),
    };
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'nest12-user-app', private: true, dependencies }, null, 2),
    );
    // Metadata npm cached already (the variants' installs, an earlier run) is not asked again.
    // A stalled install (seen once: npm asleep in its reify, everything from its cache, for 13
    // minutes, deaf to SIGTERM, so the CI run hung) is killed after 150 s and run once more.
    const install = () =>
      runCommand(
        'npm',
        ['install', '--prefer-offline', '--no-audit', '--no-fund', '--strict-peer-deps'],
        dir,
        userEnv,
        150_000,
      );
    try {
      install();
    } catch (error) {
      if (!(error instanceof CommandTimedOut)) throw error;
      install();
    }
    cpSync(join(__dirname, 'app'), dir, { recursive: true });
    run(join(dir, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], dir);
  }, 420_000);

  beforeAll(async () => {
    app = spawn(process.execPath, ['dist/main.js'], {
      cwd: dir,
      env: { ...userEnv, PREFIX: uniquePrefix('n12'), PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    app.stdout!.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    app.stderr!.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    await waitFor(
      () => /listening \d+ nest/.test(logs.join('')) || app!.exitCode !== null,
      'the app to listen',
      30_000,
    );
    banner = logs.join('').match(/listening \d+ nest \S+/)?.[0] ?? '';
    const port = logs.join('').match(/listening (\d+)/)?.[1];
    if (!port) throw new Error(`the app did not start:\n${logs.join('')}`);
    base = `http://127.0.0.1:${port}`;
  }, 60_000);

  afterAll(async () => {
    if (app && app.exitCode === null) {
      const exited = new Promise((done) => app!.once('exit', done));
      app.kill('SIGTERM');
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const post = (tenant: string | undefined, file: string) =>
    fetch(`${base}/uploads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(tenant ? { 'x-tenant-id': tenant } : {}) },
      body: JSON.stringify({ file }),
    });

  it('runs on NestJS 12, installed without peer overrides', () => {
    expect(banner).toMatch(/nest 12\./);
  });

  it("runs each job in the tenant of the request that enqueued it, and only that tenant's", async () => {
    const acme = await post('acme', 'cat.png');
    const globex = await post('globex', 'dog.png');
    expect([acme.status, globex.status]).toEqual([201, 201]);
    const enqueued = (await acme.json()) as { id: string; tenantId: string };
    expect(enqueued.tenantId).toBe('acme');
    const thumbnails = async (tenant: string) =>
      (await (
        await fetch(`${base}/uploads/thumbnails`, { headers: { 'x-tenant-id': tenant } })
      ).json()) as {
        tenantId: string;
        file: string;
        jobId: string;
      }[];
    await waitFor(async () => (await thumbnails('globex')).length === 1, 'both jobs to run');
    await waitFor(async () => (await thumbnails('acme')).length === 1, 'both jobs to run');
    expect(await thumbnails('acme')).toEqual([
      { tenantId: 'acme', file: 'cat.png', jobId: enqueued.id },
    ]);
    expect(await thumbnails('globex')).toEqual([
      expect.objectContaining({ tenantId: 'globex', file: 'dog.png' }),
    ]);
  });

  it('runs an unchanged @nestjs/bullmq 12 @Processor in its tenant (TenantBullMqModule)', async () => {
    expect(versionOf(dir, '@nestjs/bullmq')).toMatch(/^12\./);
    const exported = await fetch(`${base}/uploads/exports`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tenant-id': 'initech' },
      body: JSON.stringify({ file: 'report.csv' }),
    });
    expect(exported.status).toBe(201);
    const { id } = (await exported.json()) as { id: string };
    const made = async () =>
      (await (
        await fetch(`${base}/uploads/thumbnails`, { headers: { 'x-tenant-id': 'initech' } })
      ).json()) as { tenantId: string; file: string; jobId: string }[];
    await waitFor(async () => (await made()).length === 1, 'the export job to run');
    expect(await made()).toEqual([{ tenantId: 'initech', file: 'report.csv', jobId: id }]);
  });

  it('refuses a request without a tenant before anything is enqueued', async () => {
    const refused = await post(undefined, 'x.png');
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toMatch(/x-tenant-id/);
  });
});
