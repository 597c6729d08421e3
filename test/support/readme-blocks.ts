import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/** A TypeScript block of a docs page that claims to be a complete file (`// file: <name>`). */
export interface ReadmeFile {
  /** The page it sits on, from the repository root (`README.md`, `docs/testing.md`): one project. */
  section: string;
  /** `app.module.ts`, from the block's first line. */
  name: string;
  /** 1-based line of the block's first line in its page. */
  line: number;
  source: string;
}

export const REPO_ROOT = resolve(__dirname, '../..');
const FILE_MARK = /^\/\/ file: ([\w.-]+\.ts)\s*$/;
/**
 * The pages of the docs, from the repository root: README.md, then docs/**\/*.md in path order
 * (the generated API reference under docs/api/ included).
 */
export function docPages(): string[] {
  const pages: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(REPO_ROOT, folder), { withFileTypes: true })) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) pages.push(path);
    }
  };
  walk('docs');
  return ['README.md', ...pages.sort()];
}

/** The lines of a page with the lines inside code fences blanked, for prose-only scans. */
function proseLines(text: string): string[] {
  let fence = false;
  return text.split('\n').map((line) => {
    if (line.startsWith('```')) {
      fence = !fence;
      return '';
    }
    return fence ? '' : line;
  });
}

/** A TypeScript block of a page that is not a complete file: a snippet. */
export interface Snippet {
  page: string;
  /** 1-based line of the block's first line in its page. */
  line: number;
  source: string;
}

/** Every TypeScript block of one page, in order, with the file name its first line marks. */
function typeScriptBlocks(page: string): (Snippet & { name?: string })[] {
  const lines = readFileSync(join(REPO_ROOT, page), 'utf8').split('\n');
  const blocks: (Snippet & { name?: string })[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)/.exec(lines[i]);
    if (!fence) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
    const body = lines.slice(i + 1, end);
    if (/^(ts|typescript)$/.test(fence[1])) {
      const name = FILE_MARK.exec(body[0] ?? '')?.[1];
      blocks.push({ page, line: i + 2, source: body.join('\n'), name });
    }
    i = end;
  }
  return blocks;
}

/** Every complete TypeScript block of one page, in order. */
export function readmeFiles(page = 'README.md'): ReadmeFile[] {
  return typeScriptBlocks(page).flatMap(({ name, line, source }) =>
    name ? [{ section: page, name, line, source: `${source}\n` }] : [],
  );
}

/** The TypeScript blocks of a page without a `// file:` mark. */
export function pageSnippets(page: string): Snippet[] {
  return typeScriptBlocks(page)
    .filter((block) => !block.name)
    .map(({ line, source }) => ({ page, line, source }));
}

/** What a snippet may be: a module, members of a class or an object, statements, list items. */
const SNIPPET_KINDS: ((source: string) => string)[] = [
  (source) => source,
  (source) => `class Snippet {\n${source}\n}`,
  (source) => `async function snippet() {\n${source}\n}`,
  (source) => `const snippet = {\n${source}\n};`,
  (source) => `const snippet = [\n${source}\n];`,
];

/** Whether a snippet parses as TypeScript as one of the kinds above (no type check). */
export function snippetParses(source: string): boolean {
  return SNIPPET_KINDS.some((kind) => {
    const file = ts.createSourceFile('snippet.ts', kind(source), ts.ScriptTarget.ES2022);
    // parseDiagnostics is internal to the compiler API, and the only syntax-only check it has.
    return (file as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length === 0;
  });
}

/** A folder name for a section: its words, lower case, joined by dashes. */
export function sectionSlug(section: string): string {
  return section
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/**
 * The anchors GitHub gives a page's headings: the heading's text without markup, lower case,
 * punctuation dropped but `-` and `_`, spaces as `-`; a repeated one gets `-1`, `-2`, ...
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .trim()
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[`*]/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count ? `${base}-${count}` : base);
  }
  return anchors;
}

/** A link of a page that leads nowhere: its line, target and why. */
export interface BrokenLink {
  page: string;
  line: number;
  target: string;
  why: string;
}

/**
 * The relative links of every page (prose and images, not code) whose file is missing, or whose
 * `#anchor` is not a heading of the page it names.
 */
export function brokenLinks(pages = docPages()): BrokenLink[] {
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    let known = anchorsOf.get(path);
    if (!known) {
      known = headingAnchors(readFileSync(join(REPO_ROOT, path), 'utf8'));
      anchorsOf.set(path, known);
    }
    return known;
  };
  const broken: BrokenLink[] = [];
  for (const page of pages) {
    const lines = proseLines(readFileSync(join(REPO_ROOT, page), 'utf8'));
    lines.forEach((text, index) => {
      const prose = text.replace(/`[^`]*`/g, '');
      for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
        const [file, anchor] = target.split('#');
        const path = file
          ? relative(REPO_ROOT, resolve(REPO_ROOT, page, '..', decodeURI(file)))
          : page;
        const fail = (why: string) => broken.push({ page, line: index + 1, target, why });
        let exists = true;
        try {
          readdirSync(join(REPO_ROOT, path));
        } catch (error) {
          exists = (error as NodeJS.ErrnoException).code === 'ENOTDIR';
        }
        if (!exists) fail(`no file ${path}`);
        else if (anchor !== undefined && !path.endsWith('.md')) fail(`${path} has no anchors`);
        else if (anchor !== undefined && !anchors(path).has(anchor))
          fail(`${path} has no #${anchor}`);
      }
    });
  }
  return broken;
}

const REPO_FOLDERS = ['lib', 'test', 'sample-app', 'bench', 'scripts'];

/** Every file under the folders a page may name (node_modules left out), from the repository root. */
function repoFiles(): string[] {
  const files: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(REPO_ROOT, folder), { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue;
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  REPO_FOLDERS.forEach(walk);
  return files;
}

/** A path whose `*` matches within one folder and whose `**` segment any folders, as a pattern. */
function globPattern(path: string): RegExp {
  const parts = path.split('**/').map((part) =>
    part
      .split('*')
      .map((text) => text.replace(/[.+?^$()|[\]\\]/g, '\\$&'))
      .join('[^/]*'),
  );
  return new RegExp('^' + parts.join('(?:.*/)?') + '$');
}

/**
 * The repository paths a written page names in its prose (`lib/...`, `test/...`, `sample-app/...`,
 * `bench/...`, `scripts/...`; `*` within one folder, a `**` segment any folders) that match no file or folder.
 * Paths with a placeholder (`<name>`) or a brace list are left out.
 */
export function missingRepoPaths(pages = docPages()): BrokenLink[] {
  const files = repoFiles();
  const folders = new Set(
    files.flatMap((file) =>
      file
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  const missing: BrokenLink[] = [];
  for (const page of pages.filter((path) => !path.startsWith('docs/api/'))) {
    proseLines(readFileSync(join(REPO_ROOT, page), 'utf8')).forEach((text, index) => {
      for (const [, named] of text.matchAll(
        /`((?:lib|test|sample-app|bench|scripts)\/[^`\s]*)`/g,
      )) {
        if (/[<{]/.test(named)) continue;
        const path = named.replace(/[/:,.]+$/, '');
        const pattern = globPattern(path);
        if (!files.some((file) => pattern.test(file)) && ![...folders].some((f) => pattern.test(f)))
          missing.push({ page, line: index + 1, target: named, why: 'no such file or folder' });
      }
    });
  }
  return missing;
}
