import { DynamicModule, INestApplication, Type, ValueProvider } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Job, Queue } from 'bullmq';
import request from 'supertest';
import * as ts from 'typescript';
import * as library from '../../../lib';
import {
  InMemoryTenantDirectory,
  TenantDirectory,
  TenantQueueRegistry,
  TenantScheduler,
} from '../../../lib';
import { TENANT_QUEUE_MODULE_OPTIONS } from '../../../lib/tenant-queue.module-definition';
import {
  REPO_ROOT,
  ReadmeFile,
  brokenLinks,
  docPages,
  headingAnchors,
  missingRepoPaths,
  pageSnippets,
  readmeFiles,
  sectionSlug,
  snippetParses,
} from '../../support/readme-blocks';
import { ManualClock, bootSchedulerApp } from '../../fixtures/scheduler-app';
import { uniquePrefix } from '../../support/redis-url';
import { testConnection } from '../../support/test-redis';
import { waitFor } from '../../support/wait';

/** Where a page's file lives for the compiler: a folder per page, beside this test. */
const QUICK_START = 'README.md';
const virtualPath = (file: ReadmeFile) =>
  join(REPO_ROOT, 'test', 'readme', sectionSlug(file.section), file.name);

/**
 * Each page's files with the Quick start's beside them (a page may import `./app.module`),
 * unless the page has a file of that name itself.
 */
function projects(files: ReadmeFile[]): ReadmeFile[] {
  const quickStart = files.filter((file) => file.section === QUICK_START);
  const sections = [...new Set(files.map((file) => file.section))];
  return sections.flatMap((section) => {
    const own = files.filter((file) => file.section === section);
    const borrowed = quickStart
      .filter((qs) => !own.some((file) => file.name === qs.name))
      .map((qs) => ({ ...qs, section }));
    return [...own, ...borrowed];
  });
}

/** Type-checks the pages' complete files as a user's project would, against lib/ itself. */
function typeCheck(files: ReadmeFile[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(REPO_ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  )!;
  const options: ts.CompilerOptions = {
    ...config.options,
    // As a Nest CLI project compiles (11 and 12): with isolatedModules and decorator metadata,
    // nodenext refuses a type imported by name into a decorated signature (TS1272); commonjs does not.
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    baseUrl: REPO_ROOT,
    paths: {
      'nestjs-tenant-queue': ['lib/index.ts'],
      'nestjs-tenant-queue/bullmq': ['lib/bullmq-compat/index.ts'],
      'nestjs-tenant-queue/dist/*': ['lib/*'],
    },
  };
  const sources = new Map(files.map((file) => [virtualPath(file), file.source]));
  const folders = new Set([...sources.keys()].map((path) => dirname(path)));
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile, directoryExists } = host;
  host.fileExists = (path) => sources.has(path) || fileExists.call(host, path);
  host.directoryExists = (path) =>
    [...folders].some((folder) => folder === path || folder.startsWith(`${path}/`)) ||
    (directoryExists?.call(host, path) ?? ts.sys.directoryExists(path));
  host.readFile = (path) => sources.get(path) ?? readFile.call(host, path);
  host.getSourceFile = (path, language, onError) => {
    const text = sources.get(path);
    if (text === undefined) return getSourceFile.call(host, path, language, onError);
    return ts.createSourceFile(path, text, language);
  };
  const program = ts.createProgram([...sources.keys()], options, host);
  const byPath = new Map(files.map((file) => [virtualPath(file), file]));
  return [...program.getGlobalDiagnostics(), ...program.getOptionsDiagnostics()]
    .concat(
      [...sources.keys()].flatMap((path) => {
        const sourceFile = program.getSourceFile(path)!;
        return [
          ...program.getSyntacticDiagnostics(sourceFile),
          ...program.getSemanticDiagnostics(sourceFile),
        ];
      }),
    )
    .map((d) => {
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      if (!d.file) return message;
      const file = byPath.get(d.file.fileName);
      const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
      return file
        ? `${file.section}:${file.line + line} (${file.name}): TS${d.code} ${message}`
        : `${d.file.fileName}:${line + 1}: TS${d.code} ${message}`;
    });
}

/**
 * Loads one page's files as CommonJS, `nestjs-tenant-queue` being lib/ and `./x` the
 * page's file `x.ts`; packages resolve from this repository.
 */
function loadSection(files: ReadmeFile[], entry: string): Record<string, unknown> {
  const loaded = new Map<string, Record<string, unknown>>();
  const load = (name: string): Record<string, unknown> => {
    const known = loaded.get(name);
    if (known) return known;
    const file = files.find((f) => f.name === name);
    if (!file) throw new Error(`the page has no file ${name}`);
    const { outputText } = ts.transpileModule(file.source, {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        esModuleInterop: true,
        useDefineForClassFields: false,
      },
    });
    const module = { exports: {} as Record<string, unknown> };
    loaded.set(name, module.exports);
    const requireFrom = (id: string): unknown => {
      if (id === 'nestjs-tenant-queue') return library;
      if (id.startsWith('./')) return load(`${id.slice(2)}.ts`);
      // jest's own require, so the pages' code shares this test's copy of every package.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require(id);
    };
    new Function('require', 'module', 'exports', outputText)(requireFrom, module, module.exports);
    return module.exports;
  };
  return load(entry);
}

describe('the code and links of README.md and docs/', () => {
  const files = docPages().flatMap((page) => readmeFiles(page));
  const quickStart = files.filter((file) => file.section === QUICK_START);

  it('marks its complete files, the Quick start among them', () => {
    expect(quickStart.map((file) => file.name)).toEqual(['app.module.ts', 'main.ts']);
    expect(files.length).toBeGreaterThanOrEqual(4);
  });

  it('no page links to a missing file or heading (GitHub anchors)', () => {
    const pages = docPages();
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/tour.md']));
    expect(brokenLinks(pages)).toEqual([]);
  });

  it('no page names a repository path (lib/, test/, sample-app/, ...) that does not exist', () => {
    expect(missingRepoPaths()).toEqual([]);
  });

  it('every written page links to the API reference and the errors page', () => {
    const written = docPages().filter((page) => !page.startsWith('docs/api/'));
    const missing = written.filter((page) => {
      const text = readFileSync(join(REPO_ROOT, page), 'utf8');
      return !/\]\((\.\.\/)*(docs\/)?api\/README\.md\)/.test(text) || !/errors\.md\)/.test(text);
    });
    expect(written.length).toBeGreaterThan(25);
    expect(missing).toEqual([]);
  });

  it('the map (docs/README.md) lists every page of docs/', () => {
    const map = readFileSync(join(REPO_ROOT, 'docs/README.md'), 'utf8');
    const unlisted = docPages()
      .filter((page) => /^docs\/(?!api\/|README\.md$)/.test(page))
      .filter((page) => !map.includes(`](${page.slice('docs/'.length)})`));
    expect(unlisted).toEqual([]);
  });

  it('makes anchors as GitHub does (markup and punctuation dropped, repeats numbered)', () => {
    const page =
      '# Run the sample\n## The `_tenant` envelope\n### Migrating from @nestjs/bullmq\n## Configure\n## Configure\n```bash\n# not a heading\n```';
    expect([...headingAnchors(page)]).toEqual([
      'run-the-sample',
      'the-_tenant-envelope',
      'migrating-from-nestjsbullmq',
      'configure',
      'configure-1',
    ]);
  });

  it('every other TypeScript block (a snippet) parses: a module, members, statements or items', () => {
    const snippets = docPages()
      .filter((page) => !page.startsWith('docs/api/')) // TypeDoc's signatures, not code to paste
      .flatMap((page) => pageSnippets(page));
    expect(snippets.length).toBeGreaterThan(40);
    const broken = snippets
      .filter((s) => !snippetParses(s.source))
      .map((s) => `${s.page}:${s.line}`);
    expect(broken).toEqual([]);
    expect(snippetParses('async process(job) { ... }')).toBe(false);
  });

  it('every complete file compiles against the library (strict tsc)', () => {
    expect(typeCheck(projects(files))).toEqual([]);
  }, 120_000);

  describe('the "Testing your app" spec, run as written (no Redis)', () => {
    // Its describe/it register here, at collection time; `./app.module` is the Quick start's.
    loadSection(
      projects(files).filter((file) => file.section === 'docs/testing.md'),
      'uploads.spec.ts',
    );
  });

  describe('the @TenantCron module of docs/schedules.md, run against Redis', () => {
    let app: TestingModule;
    const clock = new ManualClock(Date.parse('2026-06-01T00:00:00Z'));

    beforeAll(async () => {
      const page = projects(files).filter((file) => file.section === 'docs/schedules.md');
      const { DigestModule, DigestService } = loadSection(page, 'digest.module.ts') as {
        DigestModule: Type;
        DigestService: Type;
      };
      // The page's own service and directory, on the test Redis with a clock this test moves.
      const [root] = Reflect.getMetadata('imports', DigestModule) as DynamicModule[];
      const directory = (root.providers as ValueProvider[]).find(
        (provider) => provider.provide === TenantDirectory,
      )!.useValue as InMemoryTenantDirectory;
      app = await bootSchedulerApp({
        prefix: uniquePrefix('readme-cron'),
        clock,
        directory,
        providers: [DigestService],
      });
    });

    afterAll(async () => {
      await app?.close();
    });

    it("runs the digest at 09:00 in each active tenant's zone, in its context; none for the suspended", async () => {
      const registry = app.get(TenantQueueRegistry);
      const cron = registry.getQueue('tq-cron').bullQueue;
      const fanout = registry.getQueue('tq-cron-fanout').bullQueue;
      const settle = async (when: string, job: string) => {
        clock.set(when);
        const { jobIds } = await app.get(TenantScheduler).tick();
        expect(jobIds.length).toBeGreaterThan(0);
        for (const id of jobIds) {
          await waitFor(
            async () => (await fanout.getJobState(id)) === 'completed',
            `fan-out ${id}`,
          );
        }
        let state = '';
        await waitFor(async () => {
          state = await cron.getJobState(job);
          return state === 'completed' || state === 'failed' || state === 'unknown';
        }, `${job} to end`);
        return state;
      };
      // 09:00 in Kyiv (UTC+3 in June): acme's digest; getTenantIdOrThrow() in the handler, so
      // completed means it ran in acme's context.
      expect(await settle('2026-06-01T06:00:00Z', 'nightly-digest~acme~20260601T060000Z')).toBe(
        'completed',
      );
      // 09:00 in New York (UTC-4): globex's turn, but it is suspended, so its fan-out made no job.
      expect(await settle('2026-06-01T13:00:00Z', 'nightly-digest~globex~20260601T130000Z')).toBe(
        'unknown',
      );
    });
  });

  describe('the Quick start, run against Redis', () => {
    let app: INestApplication;
    const prefix = uniquePrefix('readme');

    beforeAll(async () => {
      const { AppModule } = loadSection(quickStart, 'app.module.ts') as { AppModule: Type };
      // The README's own module, on the test Redis under a fresh prefix.
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
        .overrideProvider(TENANT_QUEUE_MODULE_OPTIONS)
        .useValue({ connection: testConnection(), prefix })
        .compile();
      app = moduleRef.createNestApplication({ logger: false });
      await app.init();
    });

    afterAll(async () => {
      await app?.close();
    });

    it('a request with a tenant header enqueues a job whose handler sees that tenant', async () => {
      const res = await request(app.getHttpServer())
        .post('/uploads')
        .set('x-tenant-id', 'acme')
        .send({ file: 'cat.png' })
        .expect(201);
      expect(res.body).toMatchObject({ queueName: 'media', tenantId: 'acme' });

      // As the README reads it: BullMQ's own Queue under the prefix `{<prefix>:media}`.
      const queue = new Queue('media', {
        connection: testConnection(),
        prefix: `{${prefix}:media}`,
      });
      try {
        let state = '';
        await waitFor(async () => {
          state = await queue.getJobState(res.body.id);
          return state === 'completed' || state === 'failed';
        }, 'the job to finish');
        const job = (await Job.fromId(queue, res.body.id))!;
        expect(state).toBe('completed');
        expect(job.returnvalue).toEqual({ tenantId: 'acme', thumbnail: 'cat.thumb.png' });
      } finally {
        await queue.close();
      }
    });

    it('a request without a tenant is refused with 400 and enqueues nothing', async () => {
      const res = await request(app.getHttpServer())
        .post('/uploads')
        .send({ file: 'x.png' })
        .expect(400);
      expect(res.body.message).toContain('x-tenant-id');
      const queue = app.get(TenantQueueRegistry).getQueue('media').bullQueue;
      expect(await queue.getJobCountByTypes('waiting', 'active', 'completed', 'failed')).toBe(1);
    });
  });
});
