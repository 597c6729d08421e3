import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPTIONAL_PEER_RANGES } from './optional-peer';

const ROOT = join(__dirname, '..', '..', '..');

/**
 * Requires each of `paths` in a fresh Node process where the packages named in `missing` (and
 * their subpaths) cannot be found, as in an app that did not install them; reports for each
 * what was thrown (or `loaded`).
 */
function loadWithout(missing: string[], paths: string[]): Record<string, string> {
  const script = `
    const Module = require('node:module');
    const missing = ${JSON.stringify(missing)};
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (request, ...rest) {
      if (missing.some((peer) => request === peer || request.startsWith(peer + '/'))) {
        const error = new Error("Cannot find module '" + request + "'");
        error.code = 'MODULE_NOT_FOUND';
        throw error;
      }
      return resolve.call(this, request, ...rest);
    };
    require('reflect-metadata');
    const out = {};
    for (const path of ${JSON.stringify(paths)}) {
      try {
        require(path);
        out[path] = 'loaded';
      } catch (error) {
        out[path] = error.name + ' ' + JSON.stringify([error.entryPoint, error.peer]) + ': ' + error.message;
      }
    }
    console.log(JSON.stringify(out));
  `;
  const out = execFileSync(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-e', script],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as Record<string, string>;
}

describe('entry points whose optional peer dependency is missing', () => {
  it('keeps the ranges it names equal to package.json peerDependencies, optional ones', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    for (const [peer, range] of Object.entries(OPTIONAL_PEER_RANGES)) {
      expect([peer, range, pkg.peerDependenciesMeta[peer]?.optional]).toEqual([
        peer,
        pkg.peerDependencies[peer],
        true,
      ]);
    }
  });

  it('fails with MissingPeerDependencyError naming the entry point, the peer and the npm command', () => {
    // A @nestjs peer at the app's Nest major (npm would take 12, ES modules only, beside Nest 11).
    const nest = (
      JSON.parse(readFileSync(require.resolve('@nestjs/core/package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    const major = nest.split('.')[0];
    const out = loadWithout(
      ['@nestjs/terminus', '@nestjs/bullmq', '@bull-board/nestjs', '@bull-board/api'],
      ['./lib/health', './lib/bullmq-compat', './lib/bull-board'],
    );
    expect(out).toEqual({
      './lib/health':
        'MissingPeerDependencyError ["nestjs-tenant-queue/health","@nestjs/terminus"]: ' +
        'nestjs-tenant-queue/health needs @nestjs/terminus, an optional peer dependency of ' +
        'nestjs-tenant-queue that is not installed. Install it: ' +
        `npm install "@nestjs/terminus@^${major}"`,
      './lib/bullmq-compat':
        'MissingPeerDependencyError ["nestjs-tenant-queue/bullmq","@nestjs/bullmq"]: ' +
        'nestjs-tenant-queue/bullmq needs @nestjs/bullmq, an optional peer dependency of ' +
        `nestjs-tenant-queue that is not installed. Install it: npm install "@nestjs/bullmq@^${major}"`,
      './lib/bull-board':
        'MissingPeerDependencyError ["nestjs-tenant-queue/bull-board","@bull-board/nestjs"]: ' +
        'nestjs-tenant-queue/bull-board needs @bull-board/nestjs, an optional peer dependency of ' +
        'nestjs-tenant-queue that is not installed. Install it: ' +
        'npm install "@bull-board/nestjs@^9.10.1"',
    });
  });

  it('loads the other entry points without any optional peer', () => {
    const out = loadWithout(
      [
        ...Object.keys(OPTIONAL_PEER_RANGES),
        '@bull-board/api',
        'prom-client',
        '@opentelemetry/api',
        'bullmq-otel',
      ],
      ['./lib', './lib/testing', './lib/dashboard', './lib/telemetry'],
    );
    expect(out).toEqual({
      './lib': 'loaded',
      './lib/testing': 'loaded',
      './lib/dashboard': 'loaded',
      './lib/telemetry': 'loaded',
    });
  });

  it('loads every entry point when the peers are installed', () => {
    const out = loadWithout([], ['./lib/health', './lib/bullmq-compat', './lib/bull-board']);
    expect(Object.values(out)).toEqual(['loaded', 'loaded', 'loaded']);
  });
});
