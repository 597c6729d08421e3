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
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { packedPackage, run } from '../../support/packed-package';

const root = resolve(__dirname, '../../..');
/** Each entry point's value exports, as the public API snapshot lists them. */
const SNAPSHOT = JSON.parse(
  readFileSync(join(root, 'lib', 'public-api.snapshot.json'), 'utf8'),
) as Record<string, { values: string[] }>;
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
    // Packed in a clone without dist/ (never built), so `npm pack` there must build the code
    // itself (prepack), with only node, npm and a shell on the PATH; once for every run with the
    // same sources (see packedPackage).
    const packed = packedPackage();
    files = packed.files;
    const modules = join(app, 'node_modules');
    const target = join(modules, 'nestjs-tenant-queue');
    mkdirSync(target, { recursive: true });
    run(
      'tar',
      ['-xzf', join(packed.dir, packed.filename), '-C', target, '--strip-components=1'],
      app,
    );
    for (const entry of readdirSync(join(root, 'node_modules'))) {
      if (entry === '.bin' || entry.startsWith('.') || entry === 'nestjs-tenant-queue') continue;
      symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
    }
  }, 300_000);

  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it('ships dist, the Lua scripts and the MIT LICENSE, and nothing from the repository', () => {
    // Built by prepack in a clone that had no dist/: every entry point's code is in the tarball.
    expect(files).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'package.json',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/tenant-queue.module.js',
        'dist/dead-letters/dead-letter-record.lua',
      ]),
    );
    expect(files.some((file) => file.endsWith('.lua'))).toBe(true);
    // No source maps: they would name lib/*.ts files the tarball does not carry.
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    expect(
      files.filter((file) => !/^(dist\/|LICENSE$|README\.md$|package\.json$)/.test(file)),
    ).toEqual([]);
  });

  it('requires at run time only its dependencies, its peers and Node built-ins (no devDependency)', () => {
    // The app above links this repository's whole install, devDependencies included: a package
    // the code needs but only devDependencies list would load here and fail in a user's app.
    const target = join(app, 'node_modules', 'nestjs-tenant-queue');
    const manifest = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as Record<
      'dependencies' | 'peerDependencies',
      Record<string, string>
    >;
    const declared = new Set([
      ...Object.keys(manifest.dependencies),
      ...Object.keys(manifest.peerDependencies),
    ]);
    const undeclared = new Set<string>();
    for (const file of files.filter((path) => path.endsWith('.js'))) {
      const code = readFileSync(join(target, file), 'utf8');
      for (const [, specifier] of code.matchAll(
        // Not a method of that name (JobScope's `this.require('defer')`).
        /(?<![\w$.])(?:require|import)\(\s*["']([^"'.][^"']*)["']\s*\)/g,
      )) {
        if (specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
        const name = specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/');
        if (!declared.has(name)) undeclared.add(`${name} (${file})`);
      }
    }
    expect([...undeclared]).toEqual([]);
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

  it('names a missing optional peer and its npm install command, to require and to import', () => {
    // The app's install without the peers: their resolution fails as for a package never installed.
    const peers = ['@nestjs/terminus', '@nestjs/bullmq', '@bull-board/nestjs'];
    writeFileSync(
      join(app, 'no-peers.cjs'),
      `const Module = require('node:module');
      const resolve = Module._resolveFilename;
      Module._resolveFilename = function (request, ...rest) {
        if (${JSON.stringify(peers)}.some((p) => request === p || request.startsWith(p + '/'))) {
          const error = new Error("Cannot find module '" + request + "'");
          error.code = 'MODULE_NOT_FOUND';
          throw error;
        }
        return resolve.call(this, request, ...rest);
      };
      require('reflect-metadata');`,
    );
    const entries = [
      'nestjs-tenant-queue/health',
      'nestjs-tenant-queue/bullmq',
      'nestjs-tenant-queue/bull-board',
      'nestjs-tenant-queue/dist/health',
    ];
    const report = "out[path] = error.name + ': ' + error.message;";
    writeFileSync(
      join(app, 'no-peers-require.cjs'),
      `const out = {};
      for (const path of ${JSON.stringify(entries)}) {
        try { require(path); out[path] = 'loaded'; } catch (error) { ${report} }
      }
      console.log(JSON.stringify(out));`,
    );
    writeFileSync(
      join(app, 'no-peers-import.mjs'),
      `const out = {};
      for (const path of ${JSON.stringify(entries)}) {
        try { await import(path); out[path] = 'loaded'; } catch (error) { ${report} }
      }
      console.log(JSON.stringify(out));`,
    );
    const refused = (entry: string, peer: string, range: string) =>
      `MissingPeerDependencyError: nestjs-tenant-queue/${entry} needs ${peer}, an optional peer ` +
      `dependency of nestjs-tenant-queue that is not installed. Install it: npm install "${peer}@${range}"`;
    // A @nestjs peer is named at the app's Nest major (npm would take 12 beside Nest 11).
    const nest = run(
      process.execPath,
      ['-p', "require('@nestjs/core/package.json').version.split('.')[0]"],
      app,
    ).trim();
    const terminus = refused('health', '@nestjs/terminus', `^${nest}`);
    for (const script of ['no-peers-require.cjs', 'no-peers-import.mjs']) {
      const out = run(process.execPath, ['-r', './no-peers.cjs', script], app);
      expect([script, JSON.parse(out.trim().split('\n').pop()!)]).toEqual([
        script,
        {
          'nestjs-tenant-queue/health': terminus,
          'nestjs-tenant-queue/bullmq': refused('bullmq', '@nestjs/bullmq', `^${nest}`),
          'nestjs-tenant-queue/bull-board': refused('bull-board', '@bull-board/nestjs', '^9.10.1'),
          'nestjs-tenant-queue/dist/health': terminus,
        },
      ]);
    }
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

  /** The Quick start as an ESM Nest app writes it (`"type": "module"`, nodenext imports). */
  const ESM_APP_MODULE = `
import { Body, Controller, Module, Post, UseGuards } from '@nestjs/common';
import {
  InjectTenantQueue, TenantContext, TenantJob, TenantProcessor, TenantQueue, TenantQueueModule,
  TenantRequiredGuard, TenantWorkerHost,
} from 'nestjs-tenant-queue';

export interface Upload { file: string }

@TenantProcessor('media', { concurrency: 10 })
export class MediaProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) { super(); }
  async process(job: TenantJob<Upload>) {
    const tenantId = this.tenant.getTenantIdOrThrow();
    return { tenantId, thumbnail: job.data.file.replace(/(\\.\\w+)?$/, '.thumb$1') };
  }
}

@Controller('uploads')
@UseGuards(TenantRequiredGuard)
export class UploadsController {
  constructor(@InjectTenantQueue('media') private readonly media: TenantQueue<Upload>) {}
  @Post()
  upload(@Body() body: Upload) { return this.media.add('thumbnail', { file: body.file }); }
}

@Module({
  imports: [
    TenantQueueModule.forRoot({
      connection: { url: process.env.REDIS_URL ?? 'redis://localhost:6379' },
      prefix: process.env.TQ_PREFIX,
    }),
    TenantQueueModule.registerQueue({ name: 'media' }),
  ],
  controllers: [UploadsController],
  providers: [MediaProcessor],
})
export class AppModule {}
`;
  const ESM_MAIN = `
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { TenantQueueRegistry } from 'nestjs-tenant-queue';
import { AppModule } from './app.module.js';

const app = await NestFactory.create(AppModule, { logger: ['error'] });
await app.listen(0, '127.0.0.1');
const res = await fetch(\`\${await app.getUrl()}/uploads\`, {
  method: 'POST',
  headers: { 'x-tenant-id': 'acme', 'content-type': 'application/json' },
  body: JSON.stringify({ file: 'cat.png' }),
});
const enqueued = await res.json();
const bull = app.get(TenantQueueRegistry).getQueue('media').bullQueue;
let result: unknown;
for (let i = 0; i < 600 && result === undefined; i++) {
  // Read the job after its state says completed: a job read before that has no return value yet.
  if ((await bull.getJobState(enqueued.id)) === 'completed') {
    result = (await bull.getJob(enqueued.id))!.returnvalue;
  } else await new Promise((resolve) => setTimeout(resolve, 50));
}
await app.close();
console.log(JSON.stringify({ status: res.status, tenantId: enqueued.tenantId, result }));
`;

  it('gives every named export to an ESM app ("type": "module"), which boots the Quick start', () => {
    const esm = join(app, 'esm');
    mkdirSync(esm, { recursive: true });
    writeFileSync(join(esm, 'package.json'), JSON.stringify({ type: 'module' }));
    // Every value of every entry point, imported by name: Node's CommonJS interop refuses the
    // whole file (SyntaxError) when one named export is not found.
    const lines: string[] = ["import 'reflect-metadata';"];
    const checks: string[] = [];
    let n = 0;
    for (const [subpath, { values }] of Object.entries(SNAPSHOT)) {
      const specifier =
        subpath === '.' ? 'nestjs-tenant-queue' : `nestjs-tenant-queue${subpath.slice(1)}`;
      const names = values.map((name) => `${name} as v${n++}`);
      lines.push(`import { ${names.join(', ')} } from '${specifier}';`);
      values.forEach((name, i) =>
        checks.push(`[${JSON.stringify(`${subpath} ${name}`)}, v${n - values.length + i}]`),
      );
    }
    lines.push(
      `const all = [${checks.join(', ')}];`,
      `console.log(JSON.stringify({ count: all.length, undefined: all.filter(([, v]) => v === undefined).map(([k]) => k) }));`,
    );
    writeFileSync(join(esm, 'names.js'), lines.join('\n'));
    const names = JSON.parse(run(process.execPath, ['names.js'], esm).trim().split('\n').pop()!);
    expect(names).toEqual({ count: n, undefined: [] });
    expect(n).toBeGreaterThan(100);

    // The app links this repository's install (Nest 11). A variant run on another Nest (test:nest12,
    // whose packed app boots on Nest 12 in test/nest12/packed-app.nest12-spec.ts) checks the names
    // above and stops here: booting would mix its Nest with the linked one.
    const linked = readFileSync(
      join(root, 'node_modules', '@nestjs', 'core', 'package.json'),
      'utf8',
    );
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    if (JSON.parse(linked).version !== require('@nestjs/core/package.json').version) return;
    writeFileSync(join(esm, 'app.module.ts'), ESM_APP_MODULE);
    writeFileSync(join(esm, 'main.ts'), ESM_MAIN);
    run(
      tsc,
      [
        '--strict',
        '--skipLibCheck',
        '--experimentalDecorators',
        '--emitDecoratorMetadata',
        '--types',
        'node',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        'main.ts',
        'app.module.ts',
      ],
      esm,
    );
    const prefix = `esm-${process.pid}-${Date.now()}`;
    const booted = execFileSync(process.execPath, ['main.js'], {
      cwd: esm,
      encoding: 'utf8',
      // The app runs as in a user's project, on its own install: without a variant run's
      // NODE_OPTIONS resolve hook (Nest 12's would map only the CommonJS half of its Nest).
      env: { ...process.env, NODE_OPTIONS: undefined, TQ_PREFIX: prefix },
    });
    expect(JSON.parse(booted.trim().split('\n').pop()!)).toEqual({
      status: 201,
      tenantId: 'acme',
      result: { tenantId: 'acme', thumbnail: 'cat.thumb.png' },
    });
  }, 120_000);
});
