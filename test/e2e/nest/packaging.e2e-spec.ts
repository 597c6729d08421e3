import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../../..');
const tsc = join(root, 'node_modules', '.bin', 'tsc');

/** Each public entry point and one export it must give, at runtime and in its types. */
const ENTRY_POINTS: [subpath: string, exported: string][] = [
  ['nestjs-tenant-queue', 'TenantQueueModule'],
  ['nestjs-tenant-queue/health', 'TenantQueueHealthIndicator'],
  ['nestjs-tenant-queue/testing', 'TenantQueueTestingModule'],
  ['nestjs-tenant-queue/dashboard', 'TenantQueueDashboardModule'],
  ['nestjs-tenant-queue/bullmq', 'TenantBullMqModule'],
  ['nestjs-tenant-queue/bull-board', 'TenantBullBoardModule'],
  ['nestjs-tenant-queue/telemetry', 'OpenTelemetryMetricsSink'],
  // The path the README gave before the exports map, kept so existing imports still work.
  ['nestjs-tenant-queue/dist/health', 'TenantQueueHealthIndicator'],
];

function run(command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/**
 * What a user gets from the registry: the tarball `npm pack` makes, unpacked into an app's
 * node_modules next to its dependencies (linked from this repository's install), then required
 * by Node and compiled by tsc under each module resolution a Nest app uses.
 */
describe('the packed package (exports map, types, LICENSE)', () => {
  let app: string;
  let files: string[];

  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), 'tq-pack-'));
    run('npm', ['run', 'build'], root);
    const [packed] = JSON.parse(
      run('npm', ['pack', '--json', '--pack-destination', app], root),
    ) as {
      filename: string;
      files: { path: string }[];
    }[];
    files = packed.files.map((file) => file.path);
    const modules = join(app, 'node_modules');
    const target = join(modules, 'nestjs-tenant-queue');
    mkdirSync(target, { recursive: true });
    run('tar', ['-xzf', join(app, packed.filename), '-C', target, '--strip-components=1'], app);
    for (const entry of readdirSync(join(root, 'node_modules'))) {
      if (entry === '.bin' || entry.startsWith('.') || entry === 'nestjs-tenant-queue') continue;
      symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
    }
  }, 300_000);

  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it('ships dist, the Lua scripts and the MIT LICENSE, and nothing from the repository', () => {
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'package.json', 'dist/index.js']));
    expect(files.some((file) => file.endsWith('.lua'))).toBe(true);
    expect(
      files.filter((file) => !/^(dist\/|LICENSE$|README\.md$|package\.json$)/.test(file)),
    ).toEqual([]);
  });

  it("names the project's repository, homepage and issue tracker in the packed package.json", () => {
    const manifest = JSON.parse(
      readFileSync(join(app, 'node_modules', 'nestjs-tenant-queue', 'package.json'), 'utf8'),
    ) as { repository?: { url?: string }; homepage?: string; bugs?: { url?: string } };
    const repo = /^git\+(https:\/\/github\.com\/[\w.-]+\/[\w.-]+)\.git$/.exec(
      manifest.repository?.url ?? '',
    )?.[1];
    expect(repo).toBeDefined();
    expect(manifest.homepage).toBe(`${repo}#readme`);
    expect(manifest.bugs?.url).toBe(`${repo}/issues`);
  });

  it('resolves every entry point with require, and hides the internals', () => {
    const script = `
      require('reflect-metadata');
      const out = {};
      for (const [path, name] of ${JSON.stringify(ENTRY_POINTS)}) {
        out[path] = typeof require(path)[name];
      }
      out.version = require('nestjs-tenant-queue/package.json').version;
      try {
        require('nestjs-tenant-queue/dist/core/queues/tenant-queue.registry');
        out.internal = 'reachable';
      } catch (error) {
        out.internal = error.code;
      }
      console.log(JSON.stringify(out));
    `;
    const out = JSON.parse(run(process.execPath, ['-e', script], app).trim().split('\n').pop()!);
    for (const [path] of ENTRY_POINTS) expect([path, out[path]]).toEqual([path, 'function']);
    expect(out.version).toBe(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
    expect(out.internal).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it.each([
    ['node10', 'commonjs'],
    ['node16', 'node16'],
    ['bundler', 'esnext'],
  ])('gives the types of every entry point (moduleResolution %s)', (resolution, module) => {
    const imports = ENTRY_POINTS.map(
      ([path, name], i) =>
        `import { ${name} as E${i} } from '${path}';\nexport const e${i}: Function = E${i};`,
    ).join('\n');
    writeFileSync(join(app, 'index.ts'), imports);
    run(
      tsc,
      [
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--experimentalDecorators',
        '--types',
        'node',
        '--module',
        module,
        '--moduleResolution',
        resolution,
        'index.ts',
      ],
      app,
    );
  });
});
